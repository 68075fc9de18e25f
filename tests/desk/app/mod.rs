//! The app without a terminal, driven by keys and actions over a temporary database: the
//! operator's flows, hostile sequences of input, and screen snapshots (`snapshots/`).

mod contacts;
mod flow;
mod flow_delivery;
mod flow_erase;
mod flow_http;
mod flow_integrity;
mod flow_poll;
mod flow_privacy;
mod flow_settle;
mod lists;
mod markdown;
mod narrow;
mod next_to_do;
mod props;
mod reader;
mod refresh;
mod side_by_side;
mod views;
mod writing;
