//! One function per MCP method the answer path serves, each over the request's `Context`
//! and its typed params, returning the answer line (`answer::dispatch` matches the method
//! and calls one).
//!
//! They live here, beside the dispatcher, rather than in `handlers`: each is where a method
//! meets the server (what is kept and for whom, the reach, the revision's shaper and the
//! request's id), none of which a handler knows. The handlers stay plain functions of
//! (request, store) that the command line shares, and never use `server`; these only call
//! them, through what is kept, and shape what they return.

use std::time::Instant;

use rusqlite::Connection;

use super::Stop;
use super::context::Context;
use crate::handlers::completion::{self, Target};
use crate::handlers::tools::{self, Call};
use crate::handlers::{discover as discovery, skills};
use crate::protocol::{
    CallToolParams, CompleteParams, CompletionRef, Extensions, Failure, GetPromptParams,
    PromptOutcome, ToolAnswer,
};
use crate::server::cache::{ListKind, Timed};

type Line = Result<Vec<u8>, Stop>;

/// `server/discover`.
pub(super) fn discover(ctx: &Context, extensions: Extensions) -> Line {
    let found = discovery::discover(ctx.conn()?, &ctx.config().mirrors, ctx.seen)?;
    Ok(ctx.shaper.discover(ctx.id, &found, extensions))
}

/// `initialize`: the session's state is the transport's; this is its answer.
pub(super) fn initialize(ctx: &Context, extensions: Extensions) -> Line {
    let found = discovery::discover(ctx.conn()?, &ctx.config().mirrors, ctx.seen)?;
    Ok(ctx.shaper.initialize(ctx.id, &found, extensions))
}

/// `ping`.
pub(super) fn ping(ctx: &Context) -> Line {
    Ok(ctx.shaper.empty(ctx.id))
}

/// `skills/list`.
pub(super) fn skills_list(ctx: &Context, cursor: Option<&str>) -> Line {
    let sha256 = &|conn: &Connection, file: &_| ctx.sha256(conn, file);
    let page = skills::list(ctx.conn()?, ctx.config(), cursor, ctx.seen, sha256)?;
    Ok(ctx.shaper.skills_line(ctx.id, &page))
}

/// `skills/get`.
pub(super) fn skills_get(ctx: &Context, uri: &str) -> Line {
    let sha256 = &|conn: &Connection, file: &_| ctx.sha256(conn, file);
    let skill = skills::get(ctx.conn()?, uri, ctx.seen, sha256)?;
    Ok(ctx.shaper.skill_line(ctx.id, &skill))
}

/// `resources/directory/read`.
pub(super) fn directory_read(ctx: &Context, uri: &str, cursor: Option<&str>) -> Line {
    let page = skills::read_directory(ctx.conn()?, ctx.config(), uri, cursor, ctx.seen)?;
    Ok(ctx.shaper.directory_line(ctx.id, &page))
}

/// `prompts/list`.
pub(super) fn prompts_list(ctx: &Context, cursor: Option<&str>) -> Line {
    list(ctx, ListKind::Prompts, cursor)
}

/// `resources/list`.
pub(super) fn resources_list(ctx: &Context, cursor: Option<&str>) -> Line {
    list(ctx, ListKind::Resources, cursor)
}

/// `resources/templates/list`.
pub(super) fn templates_list(ctx: &Context, cursor: Option<&str>) -> Line {
    list(ctx, ListKind::Templates, cursor)
}

fn list(ctx: &Context, kind: ListKind, cursor: Option<&str>) -> Line {
    Ok(ctx.shaper.page_line(ctx.id, &*ctx.page(kind, cursor)?))
}

/// `resources/read`.
pub(super) fn resources_read(ctx: &Context, uri: &str) -> Line {
    Ok(ctx.shaper.read_line(ctx.id, &*ctx.read(uri)?))
}

/// `prompts/get`: the prompt filled, or what it lacks asked for: within the result for a
/// modern client that `can_elicit`, with a form of ours for a legacy one.
pub(super) fn prompts_get(ctx: &Context, params: &GetPromptParams, can_elicit: bool) -> Line {
    match ctx.fill(params, can_elicit)? {
        // A legacy client is asked with a request of ours, not within a result.
        PromptOutcome::InputRequired { requests, .. } if !ctx.revision.is_modern() => {
            Err(requests.into_iter().next().map_or_else(
                || Failure::Internal("a form was asked for without one".into()).into(),
                Stop::Ask,
            ))
        }
        outcome => Ok(ctx.shaper.prompt_outcome(ctx.id, &outcome)),
    }
}

/// `tools/list`: the mirrors that are on.
pub(super) fn tools_list(ctx: &Context, cursor: Option<&str>) -> Line {
    let list = tools::list(ctx.conn()?, &ctx.config().mirrors, cursor, ctx.seen)?;
    Ok(ctx.shaper.tools_line(ctx.id, &list))
}

/// `tools/call`: the request the call mirrors, answered as it is; a failure about the
/// call's input is the tool's error.
pub(super) fn tools_call(ctx: &Context, params: &CallToolParams) -> Line {
    let (id, shaper) = (ctx.id, &ctx.shaper);
    let answered = match tools::call(&ctx.config().mirrors, params)? {
        Call::ListPrompts { cursor } => ctx
            .page(ListKind::Prompts, cursor.as_deref())
            .map(|page| shaper.tool_line(id, &ToolAnswer::Page(&page))),
        Call::ListResources { cursor } => ctx
            .page(ListKind::Resources, cursor.as_deref())
            .map(|page| shaper.tool_line(id, &ToolAnswer::Page(&page))),
        Call::ReadResource { uri } => ctx
            .read(&uri)
            .map(|read| shaper.tool_line(id, &ToolAnswer::Read(&read))),
        // Missing arguments are the tool's error: a tool call asks for no form.
        Call::GetPrompt(params) => ctx.fill(&params, false).and_then(|outcome| match outcome {
            PromptOutcome::Rendered { prompt, .. } => {
                Ok(shaper.tool_line(id, &ToolAnswer::Prompt(&prompt)))
            }
            PromptOutcome::InputRequired { .. } => Err(Stop::Failed(Failure::Internal(
                "a tool call asked for a form".into(),
            ))),
        }),
        Call::Refused(sentence) => Ok(shaper.tool_line(id, &ToolAnswer::Refused(&sentence))),
    };
    match answered {
        Err(Stop::Failed(failure)) => {
            let sentence = tools::refusal(failure)?;
            Ok(shaper.tool_line(id, &ToolAnswer::Refused(&sentence)))
        }
        other => other,
    }
}

/// `completion/complete`: the argument's values ranked; how long the ranking took is kept,
/// for `bounded_from_memory`.
pub(super) fn completion_complete(ctx: &Context, params: &CompleteParams) -> Line {
    let (found, kept_templates, seen_templates);
    let target = match &params.reference {
        CompletionRef::Prompt { name } => {
            found = ctx.prompt(name)?;
            Target::Prompt(found.as_deref())
        }
        CompletionRef::Resource { .. } => {
            kept_templates = ctx.templates()?;
            if ctx.seen.is_limited() {
                seen_templates = kept_templates.seen_by(ctx.seen);
                Target::Templates(&seen_templates)
            } else {
                Target::Templates(&kept_templates)
            }
        }
    };
    let started = Instant::now();
    let completion = completion::complete(
        &|| ctx.conn(),
        ctx.served.indexes,
        ctx.position,
        params,
        target,
        ctx.seen,
    );
    ctx.took(&completion, started, || {
        Timed::Ranking(params.reference.clone(), params.argument.name.clone())
    });
    Ok(ctx.shaper.completion(ctx.id, &completion?))
}
