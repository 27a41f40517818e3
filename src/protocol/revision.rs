//! The protocol revisions this server speaks, and what each one has: which fields and
//! content types a result may carry in it.

/// Every revision this server speaks, oldest first (so `<` reads as "older than").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    V2026_07_28,
}

impl Revision {
    /// The one modern revision (per-request `_meta`, no handshake).
    pub(crate) const MODERN: Revision = Revision::V2026_07_28;
    /// Revisions spoken after `initialize`, newest first (the order a client is offered).
    pub const LEGACY: [Revision; 4] = [
        Revision::V2025_11_25,
        Revision::V2025_06_18,
        Revision::V2025_03_26,
        Revision::V2024_11_05,
    ];

    /// How many revisions there are: `index` is below it.
    pub(crate) const COUNT: usize = 5;

    /// A dense number for each revision, oldest 0, for tables kept per revision.
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Revision> {
        std::iter::once(Revision::MODERN)
            .chain(Revision::LEGACY)
            .find(|revision| revision.as_str() == text)
    }

    pub(crate) fn is_modern(self) -> bool {
        self == Revision::MODERN
    }

    /// `title` on prompts, resources and arguments; `resource_link` blocks.
    pub(crate) fn has_titles_and_links(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// A legacy revision in which a server may send `elicitation/create` requests (the
    /// modern one asks within a result instead).
    pub(crate) fn has_elicitation_requests(self) -> bool {
        (Revision::V2025_06_18..Revision::MODERN).contains(&self)
    }

    /// `elicitation/create` names its `mode` (form or URL).
    pub(crate) fn has_elicitation_modes(self) -> bool {
        self >= Revision::V2025_11_25
    }

    pub(crate) fn has_icons(self) -> bool {
        self >= Revision::V2025_11_25
    }

    /// A message may be a JSON-RPC batch (an array): only 2025-03-26 added them, and
    /// 2025-06-18 removed them.
    pub(crate) fn has_batches(self) -> bool {
        self == Revision::V2025_03_26
    }

    pub(crate) fn has_audio(self) -> bool {
        self >= Revision::V2025_03_26
    }
}

/// The names of the legacy revisions, for error messages.
pub(crate) fn legacy_names() -> String {
    Revision::LEGACY.map(Revision::as_str).join(", ")
}
