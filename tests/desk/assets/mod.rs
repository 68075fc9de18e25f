//! The files shipped in `assets/`: the example envelopes and the demo threads stay what they
//! claim to be.

mod demo;
mod examples;
