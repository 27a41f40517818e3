//! One table of the hosts: what each makes of a server's prompts (whether it shows them at
//! all, the limits that change how a prompt reaches the model) and which of its own prompt
//! and skill folders it reads, in which format. `check --host` reports a library against it,
//! `sync` writes the folders it names, and `check --host` and `config` advise from it. Each
//! line is from the host's documentation, changelog or issue tracker, named in `source`, as
//! gathered on 2026-12-07 (docs/cli.md, "`check --host`" and "`sync`"); what no source settles
//! is `Unknown` and never reported.

use super::{Host, display_name};
use crate::export::Format;
use crate::model::Prompt;

/// Whether a host does something, as far as its sources say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Support {
    Yes,
    No,
    Unknown,
}

/// One host's line of the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Profile {
    /// Whether it shows a server's MCP prompts to the person at all.
    pub prompts: bool,
    /// A prompt with more arguments than this is not shown.
    pub max_arguments: Option<usize>,
    /// Only a prompt's first message is sent to the model.
    pub first_message_only: bool,
    /// The text typed after the prompt's name is split on spaces into the arguments, in
    /// order, quotes or not: a value with a space cannot be given to any but the last.
    pub splits_on_spaces: bool,
    /// It asks for no argument values at all.
    pub asks_no_arguments: bool,
    /// Completion of argument values (`completion/complete`).
    pub completion: Support,
    /// Its own folder of commands or prompt files, which `sync` writes.
    pub commands: Option<Commands>,
    /// Its own folder of skills, which `sync` writes.
    pub skills: Option<Skills>,
    /// Where the line comes from.
    pub source: &'static str,
}

impl Profile {
    /// Whether it reads prompt or skill files of its own that `sync` writes.
    pub(crate) fn reads_folders(&self) -> bool {
        self.commands.is_some() || self.skills.is_some()
    }
}

/// A folder of the user's: under the home folder, or under the platform's folder of
/// applications' settings (`hosts::paths::app_config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UserFolder {
    Home(&'static str),
    AppConfig(&'static str),
}

/// A host's folder of commands or prompt files: under a project, `format.folder()`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Commands {
    pub format: Format,
    pub user: UserFolder,
}

/// A host's folder of Agent Skills (`NAME/SKILL.md`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Skills {
    pub project: &'static str,
    pub user: UserFolder,
    /// Every prompt goes there as a skill (a host that reads no prompt files), not only those
    /// imported from skill folders.
    pub every_prompt: bool,
}

/// A host's skills folder for the prompts imported from skill folders.
const fn skills(project: &'static str, user: UserFolder) -> Option<Skills> {
    Some(Skills {
        project,
        user,
        every_prompt: false,
    })
}

/// A host's skills folder for every prompt, a host that reads no prompt files.
const fn every_prompt_as_skill(project: &'static str, user: UserFolder) -> Option<Skills> {
    Some(Skills {
        project,
        user,
        every_prompt: true,
    })
}

/// A host's commands folder.
const fn commands(format: Format, user: UserFolder) -> Option<Commands> {
    Some(Commands { format, user })
}

const SHOWS_PROMPTS: Profile = Profile {
    prompts: true,
    max_arguments: None,
    first_message_only: false,
    splits_on_spaces: false,
    asks_no_arguments: false,
    completion: Support::Unknown,
    commands: None,
    skills: None,
    source: "",
};

const SHOWS_NO_PROMPTS: Profile = Profile {
    prompts: false,
    ..SHOWS_PROMPTS
};

/// The host's line.
pub(crate) fn profile(host: Host) -> Profile {
    use UserFolder::{AppConfig, Home};
    match host {
        Host::ClaudeDesktop => Profile {
            completion: Support::No,
            source: "modelcontextprotocol docs/clients.mdx; anthropics/claude-code#986",
            ..SHOWS_PROMPTS
        },
        Host::ClaudeCode => Profile {
            commands: commands(Format::ClaudeCommands, Home(".claude/commands")),
            skills: skills(".claude/skills", Home(".claude/skills")),
            splits_on_spaces: true,
            completion: Support::No,
            source: "code.claude.com/docs/en/mcp; anthropics/claude-code#70284, #986",
            ..SHOWS_PROMPTS
        },
        Host::Vscode => Profile {
            // VS Code's user prompt files live in its profile folder.
            commands: commands(Format::VscodePrompts, AppConfig("Code/User/prompts")),
            skills: skills(".github/skills", Home(".copilot/skills")),
            completion: Support::Yes,
            source: "code.visualstudio.com/docs/copilot/customization/mcp-servers; \
                     microsoft/vscode#249673",
            ..SHOWS_PROMPTS
        },
        Host::CopilotCli => Profile {
            skills: every_prompt_as_skill(".github/skills", Home(".copilot/skills")),
            source: "github/copilot-cli#505, #1518 (open)",
            ..SHOWS_NO_PROMPTS
        },
        Host::Cursor => Profile {
            commands: commands(Format::CursorCommands, Home(".cursor/commands")),
            skills: skills(".cursor/skills", Home(".cursor/skills")),
            source: "cursor.com/docs/mcp",
            ..SHOWS_PROMPTS
        },
        Host::Zed => Profile {
            max_arguments: Some(1),
            completion: Support::Yes,
            source: "zed-industries/zed#21944 (open), PR #17085",
            ..SHOWS_PROMPTS
        },
        Host::Windsurf => Profile {
            source: "docs.windsurf.com/windsurf/cascade/mcp (tools and resources, not prompts)",
            ..SHOWS_NO_PROMPTS
        },
        Host::Codex => Profile {
            skills: every_prompt_as_skill(".agents/skills", Home(".agents/skills")),
            source: "openai/codex#8342 (open)",
            ..SHOWS_NO_PROMPTS
        },
        Host::Gemini => Profile {
            commands: commands(Format::GeminiCommands, Home(".gemini/commands")),
            skills: skills(".gemini/skills", Home(".gemini/skills")),
            first_message_only: true,
            completion: Support::No,
            source: "google-gemini/gemini-cli#15850, #6667",
            ..SHOWS_PROMPTS
        },
        Host::Continue => Profile {
            asks_no_arguments: true,
            source: "continuedev/continue#4980",
            ..SHOWS_PROMPTS
        },
        Host::Goose => Profile {
            source: "block/goose crates/goose-cli/src/session/input.rs (`/prompt NAME k=v`)",
            ..SHOWS_PROMPTS
        },
    }
}

/// One thing a host does to a prompt, in a sentence that says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The prompt is not shown, or not sent as written; else it is a note (completion not
    /// offered).
    pub problem: bool,
    pub text: String,
}

/// What `host` makes of `prompt`, by its line of the table; nothing when the host shows it
/// as written.
pub(crate) fn findings(host: Host, prompt: &Prompt) -> Vec<Finding> {
    let profile = profile(host);
    let name = display_name(host);
    let cli = host.as_str();
    let mut found = Vec::new();
    let mut problem = |text: String| {
        found.push(Finding {
            problem: true,
            text,
        })
    };
    if !profile.prompts {
        let reach = if profile.reads_folders() {
            format!("`promptshelf sync {cli}` writes it where {name} reads prompts or skills")
        } else {
            format!(
                "its model can still get it through the tool mirrors (`promptshelf config {cli}` \
                 serves them)"
            )
        };
        problem(format!("not shown: {name} shows no MCP prompts; {reach}"));
        return found;
    }
    let arguments = prompt.arguments.len();
    if let Some(max) = profile.max_arguments
        && arguments > max
    {
        problem(format!(
            "not shown: {name} drops prompts of more than {max} argument{} (it has \
             {arguments}); make one argument of them",
            if max == 1 { "" } else { "s" }
        ));
    }
    if profile.first_message_only && prompt.messages.len() > 1 {
        problem(format!(
            "only its first message is sent: {name} uses a prompt's first message alone (it \
             has {}); write it as one message",
            prompt.messages.len()
        ));
    }
    if profile.splits_on_spaces && arguments > 1 {
        let last = &prompt.arguments[arguments - 1].name;
        let sync = if profile.reads_folders() {
            format!(", or `promptshelf sync {cli}` (a command there takes the whole text)")
        } else {
            String::new()
        };
        problem(format!(
            "arguments split on spaces: {name} splits what is typed after the prompt on \
             every space, quotes or not, so only the last argument ({last}) can take a value \
             with a space; make one argument of them{sync}"
        ));
    }
    if profile.asks_no_arguments {
        let required: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|argument| argument.required)
            .map(|argument| argument.name.as_str())
            .collect();
        if !required.is_empty() {
            problem(format!(
                "cannot be filled in: {name} asks for no argument values, so its required \
                 argument{} {} cannot be given; make {} optional",
                if required.len() == 1 { "" } else { "s" },
                required.join(", "),
                if required.len() == 1 { "it" } else { "them" }
            ));
        }
    }
    if profile.completion == Support::No {
        let completed: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|argument| argument.completion.is_some() || !argument.values.is_empty())
            .map(|argument| argument.name.as_str())
            .collect();
        if !completed.is_empty() {
            found.push(Finding {
                problem: false,
                text: format!(
                    "note: {name} offers no completion, so the values of {} are not \
                     suggested (a value typed is still checked)",
                    completed.join(", ")
                ),
            });
        }
    }
    found
}
