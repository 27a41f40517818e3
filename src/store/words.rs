//! The words FTS5 finds in a text, from FTS5's own tokenizer called directly: the search
//! index keeps no word positions (schema.sql, `detail = column`), so `store::search` checks
//! a phrase against an item's text itself, and finds the text's words exactly as the index
//! did. The one place the store calls SQLite's C interface: FTS5 offers its tokenizers
//! through a pointer (`SELECT fts5(?1)`), which rusqlite does not wrap.

use std::ffi::{c_char, c_int, c_void};
use std::marker::PhantomData;
use std::ptr;

use rusqlite::{Connection, ffi};

use super::{Result, StoreError};

/// One instance of schema.sql's `search` tokenizer: `unicode61` with `remove_diacritics 2`,
/// used only while the connection that found it is borrowed (`'conn`).
pub(super) struct Words<'conn> {
    instance: *mut ffi::Fts5Tokenizer,
    tokenizer: ffi::fts5_tokenizer,
    connection: PhantomData<&'conn Connection>,
}

/// The tokenizer's arguments, as schema.sql's `tokenize` option gives them after its name.
const ARGUMENTS: [&std::ffi::CStr; 2] = [c"remove_diacritics", c"2"];

impl<'conn> Words<'conn> {
    /// A tokenizer for `conn`'s FTS5 (the tokenizers are registered per connection).
    pub(super) fn new(conn: &'conn Connection) -> Result<Words<'conn>> {
        let api = fts5_api(conn)?;
        let mut user_data: *mut c_void = ptr::null_mut();
        let mut tokenizer = ffi::fts5_tokenizer {
            xCreate: None,
            xDelete: None,
            xTokenize: None,
        };
        let arguments: [*const c_char; 2] = ARGUMENTS.map(|argument| argument.as_ptr());
        let mut instance: *mut ffi::Fts5Tokenizer = ptr::null_mut();
        // SAFETY: `api` is the live connection's FTS5 API (checked not null); the name and
        // arguments are NUL-terminated strings that outlive the calls, which copy what they
        // keep; `tokenizer` and `instance` are written by the calls before they are read.
        let created = unsafe {
            let find = (*api).xFindTokenizer.ok_or_else(missing)?;
            if find(api, c"unicode61".as_ptr(), &mut user_data, &mut tokenizer) != 0 {
                return Err(missing());
            }
            let create = tokenizer.xCreate.ok_or_else(missing)?;
            create(
                user_data,
                arguments.as_ptr().cast_mut(),
                arguments.len() as c_int,
                &mut instance,
            )
        };
        if created != 0 || instance.is_null() || tokenizer.xTokenize.is_none() {
            return Err(missing());
        }
        Ok(Words {
            instance,
            tokenizer,
            connection: PhantomData,
        })
    }

    /// The words of `text`, folded as the index keeps them, in order: as a document's when
    /// `query` is false, as a query's when true.
    pub(super) fn of(&self, text: &str, query: bool) -> Result<Vec<String>> {
        let mut words = Vec::new();
        self.each(text, query, |word| {
            words.push(String::from_utf8_lossy(word).into_owned());
            true
        })?;
        Ok(words)
    }

    /// Gives `visit` each word of `text` in turn, folded as the index keeps them, until it
    /// returns false: as a document's words when `query` is false, a query's when true.
    pub(super) fn each(
        &self,
        text: &str,
        query: bool,
        mut visit: impl FnMut(&[u8]) -> bool,
    ) -> Result<()> {
        let flags = if query {
            ffi::FTS5_TOKENIZE_QUERY
        } else {
            ffi::FTS5_TOKENIZE_DOCUMENT
        };
        let length = c_int::try_from(text.len())
            .map_err(|_| StoreError::Invalid("a text of 2 GiB or more to search".into()))?;
        let Some(tokenize) = self.tokenizer.xTokenize else {
            return Err(missing());
        };
        let mut visit: &mut dyn FnMut(&[u8]) -> bool = &mut visit;
        // SAFETY: `instance` was made by this tokenizer's xCreate and is deleted only on
        // drop; `text` is valid for `length` bytes during the call; the callback gets back
        // the pointer to `visit` given here, alive for the call.
        let tokenized = unsafe {
            tokenize(
                self.instance,
                (&mut visit as *mut &mut dyn FnMut(&[u8]) -> bool).cast(),
                flags,
                text.as_ptr().cast(),
                length,
                Some(word),
            )
        };
        match tokenized {
            ffi::SQLITE_OK | STOPPED => Ok(()),
            failed => Err(StoreError::Invalid(format!(
                "FTS5's tokenizer failed on a text (SQLite error {failed})"
            ))),
        }
    }
}

/// What the callback returns to stop the tokenizer (which then returns it): `visit` had
/// seen enough.
const STOPPED: c_int = ffi::SQLITE_DONE;

impl Drop for Words<'_> {
    fn drop(&mut self) {
        if let Some(delete) = self.tokenizer.xDelete {
            // SAFETY: `instance` was made by this tokenizer's xCreate and is deleted once.
            unsafe { delete(self.instance) };
        }
    }
}

/// The tokenizer's callback: one word, given to the `visit` that `context` points to.
unsafe extern "C" fn word(
    context: *mut c_void,
    _flags: c_int,
    token: *const c_char,
    length: c_int,
    _start: c_int,
    _end: c_int,
) -> c_int {
    let Ok(length) = usize::try_from(length) else {
        return ffi::SQLITE_ERROR;
    };
    // SAFETY: `context` is the `&mut dyn FnMut` `Words::each` passed, alive for the call;
    // `token` is valid for `length` bytes while the callback runs.
    let going_on = unsafe {
        let visit = &mut *context.cast::<&mut dyn FnMut(&[u8]) -> bool>();
        visit(std::slice::from_raw_parts(token.cast::<u8>(), length))
    };
    if going_on { ffi::SQLITE_OK } else { STOPPED }
}

/// `conn`'s FTS5 API: `SELECT fts5(?1)` with a pointer of type `fts5_api_ptr` bound writes
/// it there (SQLite's documented way, "Extending FTS5").
fn fts5_api(conn: &Connection) -> Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    // SAFETY: the handle is the open connection's; the statement is finalized before
    // returning; the bound pointer is `api`, alive across the step, and SQLite only writes
    // a `fts5_api*` through it (the type name says so).
    let stepped = unsafe {
        let db = conn.handle();
        let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let prepared = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if prepared != ffi::SQLITE_OK {
            ffi::sqlite3_finalize(stmt);
            return Err(missing());
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&mut api as *mut *mut ffi::fts5_api).cast(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        let stepped = ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        stepped
    };
    if stepped != ffi::SQLITE_ROW || api.is_null() {
        return Err(missing());
    }
    Ok(api)
}

fn missing() -> StoreError {
    StoreError::Invalid("this SQLite has no FTS5 unicode61 tokenizer to check a phrase with".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_the_ones_the_index_keeps() {
        let conn = Connection::open_in_memory().expect("a database");
        let words = Words::new(&conn).expect("the tokenizer");
        assert_eq!(
            words.of("Naïve CAFÉ-latte, x²y", false).expect("words"),
            ["naive", "cafe", "latte", "x²y"]
        );
        // Devanagari: the vowel signs separate words, as FTS5 reads them.
        assert_eq!(words.of("हिन्दी", true).expect("words"), ["ह", "न", "द"]);
        assert!(words.of(" -- ", false).expect("words").is_empty());
    }

    proptest::proptest! {
        /// Whatever the text, its words are those an index of it made with schema.sql's
        /// tokenizer keeps, in the same order.
        #[test]
        fn any_text_has_the_words_fts5_indexes(text in "(\\PC|[ \n.,'\"*-]){0,60}") {
            let conn = Connection::open_in_memory().expect("a database");
            conn.execute_batch(
                "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
                 CREATE VIRTUAL TABLE w USING fts5vocab(t, instance);",
            )
            .expect("an index");
            conn.execute("INSERT INTO t (body) VALUES (?1)", [&text]).expect("indexed");
            let indexed: Vec<String> = conn
                .prepare("SELECT term FROM w ORDER BY offset")
                .expect("prepared")
                .query_map([], |row| row.get(0))
                .expect("read")
                .collect::<rusqlite::Result<_>>()
                .expect("terms");
            let words = Words::new(&conn).expect("the tokenizer");
            proptest::prop_assert_eq!(words.of(&text, false).expect("words"), indexed);
        }
    }

    #[test]
    fn the_arguments_are_those_the_index_is_made_with() {
        let arguments: Vec<&str> = ARGUMENTS
            .iter()
            .map(|arg| arg.to_str().expect("UTF-8"))
            .collect();
        let option = format!("tokenize = 'unicode61 {}'", arguments.join(" "));
        assert!(
            include_str!("../../schema.sql").contains(&option),
            "{option}"
        );
    }
}
