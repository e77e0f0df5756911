//! The script guard (issue 63, items 1-3): statements that would change tables sizeup
//! did not make are refused however they are spelled, against a real private server.

use crate::common;
use common::TestServer;
