//! What each MCP method does, as plain functions of (request, store connection, settings)
//! returning the plain values of `protocol::results` or a `Failure`; `protocol` turns
//! those into JSON for the client's revision.
//!
//! One module per method group. Handlers never see JSON-RPC, ids or the transport.

pub(crate) mod completion;
pub(crate) mod discover;
mod paging;
pub(crate) mod prompt_source;
pub mod prompts;
pub mod resources;
pub(crate) mod search;
pub(crate) mod skills;
pub mod templates;
pub(crate) mod tools;

use std::sync::Arc;

use crate::protocol::{Failure, ReadResult};

/// How a handler finds a resource by its exact URI, as the caller keeps them: the server's
/// cache, or the database for the command line. None: the library holds no such resource.
/// `E` is the caller's error, a `Failure` or one that can carry it.
pub(crate) type Resolve<'a, E = Failure> = &'a dyn Fn(&str) -> Result<Option<Arc<ReadResult>>, E>;
