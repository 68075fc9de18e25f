//! The HTTP binding: the desk's answers to any body, and the real `serve` on loopback under
//! clients nobody here wrote, hostile requests, load, slow connections and the companion's hop.

mod clients;
mod connections;
mod hop;
mod hostile;
mod load;
mod props;
mod serve;
