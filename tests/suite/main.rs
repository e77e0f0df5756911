//! The whole-tool tests, one binary: each file below was a test binary of its own.
//! Built as one, the tests link once (22 links of the whole tool took 52 s of the
//! tests' build) and the runner keeps both threads busy across files instead of
//! waiting, file by file, for each one's slowest test.

mod common;

mod agents;
mod auth_protocol;
mod bad_input;
mod bad_input_data;
mod bench_scripts;
mod capacity;
mod capture;
mod client;
mod client_config;
mod cluster;
mod export;
mod faults;
mod faults_round_three;
mod faults_round_two;
mod faults_server;
mod layers;
mod memory;
mod oltp;
mod plan;
mod report;
mod run_engine;
mod script;
mod script_guard;
mod server;
mod server_metrics;
mod server_status;
mod study;
mod sysbench_dropin;
mod sysbench_output;
mod third_party;
mod tls;
mod tpcc;
