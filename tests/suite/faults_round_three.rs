//! Issue 63's defects, each against a real private server the test starts (and stops on
//! drop, after a failure too): what a third fault and bad-input sweep found.

use crate::common;
use common::TestServer;
