//! rmcp's Streamable HTTP server (`StreamableHttpService`, stateless, JSON responses) behind
//! hyper on one current-thread runtime, serving the content `benches/http.rs` gives every
//! server it measures: one prompt whose argument completes from a list of values, and one
//! text document.
//!
//! Usage: `rmcp-bench-server CONTENT.json` (the same file `tests/interop/ts_server.mjs`
//! reads). Prints `listening on http://127.0.0.1:PORT/mcp` once it listens; serves until
//! killed.

use std::sync::Arc;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ListPromptsResult, ListResourcesResult,
    PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Reference, Resource, ResourceContents, Role,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;

/// What the bench serves, as it writes it to `content.json`.
#[derive(Deserialize)]
struct Content {
    prompt: String,
    argument: String,
    /// The prompt's text, with `{{ ARGUMENT }}` where the argument goes.
    text: String,
    completion: Vec<String>,
    uri: String,
    #[serde(rename = "mimeType")]
    mime_type: String,
    document: String,
}

/// The handler rmcp builds for each request (stateless serving), sharing the content.
#[derive(Clone)]
struct Library(Arc<Content>);

impl ServerHandler for Library {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_resources()
                .enable_completions()
                .build(),
        )
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let argument = PromptArgument::new(&self.0.argument).with_required(true);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            &self.0.prompt,
            Some("The bench prompt"),
            Some(vec![argument]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let content = &self.0;
        if request.name != content.prompt {
            return Err(ErrorData::invalid_params(
                format!("no prompt named '{}'", request.name),
                None,
            ));
        }
        let value = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get(&content.argument))
            .and_then(|value| value.as_str())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("the argument '{}' is required", content.argument),
                    None,
                )
            })?;
        let placeholder = format!("{{{{ {} }}}}", content.argument);
        let text = content.text.replace(&placeholder, value);
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(&self.0.uri, "document").with_mime_type(&self.0.mime_type),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let content = &self.0;
        if request.uri != content.uri {
            return Err(ErrorData::resource_not_found(
                format!("no resource at '{}'", request.uri),
                None,
            ));
        }
        let text = ResourceContents::text(&content.document, &content.uri)
            .with_mime_type(&content.mime_type);
        Ok(ReadResourceResult::new(vec![text]).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let content = &self.0;
        let ours = matches!(&request.r#ref, Reference::Prompt(prompt) if prompt.name == content.prompt)
            && request.argument.name == content.argument;
        let matching: Vec<String> = if ours {
            content
                .completion
                .iter()
                .filter(|candidate| candidate.starts_with(&request.argument.value))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let total = matching.len();
        let shown = matching
            .into_iter()
            .take(CompletionInfo::MAX_VALUES)
            .collect();
        let completion = CompletionInfo::with_pagination(
            shown,
            u32::try_from(total).ok(),
            total > CompletionInfo::MAX_VALUES,
        )
        .map_err(|message| ErrorData::internal_error(message, None))?;
        Ok(CompleteResult::new(completion))
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: rmcp-bench-server CONTENT.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("read {path}: {err}"));
    let content: Content = serde_json::from_str(&text)
        .unwrap_or_else(|err| panic!("{path} is not the bench's content: {err}"));
    let library = Library(Arc::new(content));
    let service = StreamableHttpService::new(
        move || Ok(library.clone()),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true),
    );
    // One thread, as the echo and promptshelf's async worker have.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        println!(
            "listening on http://{}/mcp",
            listener.local_addr().expect("the bound address")
        );
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
}
