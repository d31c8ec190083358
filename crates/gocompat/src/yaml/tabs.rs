//! Tabs as go-yaml takes them: white space only inside flow collections and where no
//! block token (a key, `-`, `?`) may start; anywhere else a character no token starts
//! with. It also refuses tabs in the indentation of block scalars and of plain scalars'
//! continuation lines. granit-parser is more lenient, so the text is walked here, over
//! what lies outside the scalars and flow collections the parser read.

use super::{Failure, line_of, scanner_error};

/// Text the parser read as one piece: a tab inside is content.
pub(super) struct Cover {
    pub(super) start: usize,
    pub(super) end: usize,
    /// For a plain scalar in block context: the column its continuation lines must
    /// reach (one past the enclosing block collection's).
    pub(super) plain_indent: Option<usize>,
}

/// The first tab go-yaml would refuse before byte `limit` (where it stops reading).
pub(super) fn misplaced_tab(text: &str, covers: &mut [Cover], limit: usize) -> Option<Failure> {
    covers.sort_by_key(|c| c.start);
    let b = text.as_bytes();
    let limit = ceil_boundary(text, limit);
    let mut covers = covers.iter().peekable();
    let mut i = 0;
    let mut allowed = true;
    // Whether only spaces precede `i` on its line.
    let mut at_line_start = true;
    while i < limit {
        while covers.peek().is_some_and(|c| c.start < i) {
            covers.next();
        }
        if let Some(c) = covers.next_if(|c| c.start == i) {
            i = ceil_boundary(text, c.end.max(i + 1));
            allowed = false;
            at_line_start = false;
            if let Some(indent) = c.plain_indent {
                if let Some(f) = plain_tab(text, i, indent) {
                    return Some(f);
                }
                let (next, leading) = plain_blanks(text, i);
                i = next;
                allowed = leading;
                at_line_start = leading;
            }
            continue;
        }
        let blank_after = |j: usize| matches!(b.get(j), None | Some(b' ' | b'\t' | b'\r' | b'\n'));
        // Whether this character is the first but spaces on its line: a `:` there
        // follows an explicit key, and a plain scalar there starts at its line's
        // indentation.
        let first = at_line_start;
        if !matches!(b[i], b' ' | b'\n') {
            at_line_start = false;
        }
        if b[i] == b':' && blank_after(i + 1) {
            allowed = first;
            i += 1;
            continue;
        }
        match b[i] {
            b' ' | b'\r' => {}
            b'\t' if allowed => return Some(cannot_start(text, i)),
            b'\t' => {}
            b'\n' => {
                allowed = true;
                at_line_start = true;
            }
            b'#' => {
                while i < limit && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'-' | b'?' if blank_after(i + 1) => allowed = true,
            b'|' | b'>' => {
                if let Some(f) = block_scalar_tab(text, i, block_parent(text, i)) {
                    return Some(f);
                }
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
                continue;
            }
            c => {
                // Text the parser did not get to (it stopped before): a plain scalar
                // takes up the blank lines after it as the covered ones do.
                while i < limit && !matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
                    i += 1;
                }
                allowed = false;
                if !b"[]{},\"'&*!|>%@`#".contains(&c) {
                    let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
                    let leading = text[line_start..]
                        .bytes()
                        .take_while(|x| *x == b' ')
                        .count();
                    let indent = if first { leading } else { leading + 1 };
                    if let Some(f) = plain_tab(text, i, indent) {
                        return Some(f);
                    }
                    let (next, crossed) = plain_blanks(text, i);
                    i = next;
                    allowed = crossed;
                }
                continue;
            }
        }
        i += 1;
    }
    None
}

/// `i`, or the first character boundary after it.
fn ceil_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn cannot_start(text: &str, at: usize) -> Failure {
    Failure::new(
        at,
        scanner_error(
            line_of(text, at),
            "found character that cannot start any token",
        ),
    )
}

/// The column of the block collection a block scalar's header (at byte `at`) belongs
/// to: where its line's entry starts; none for a header alone at the top.
fn block_parent(text: &str, at: usize) -> Option<usize> {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let line = &text[start..at];
    let indent = line.bytes().take_while(|c| *c == b' ').count();
    let entry = line[indent..].trim_end();
    (!entry.is_empty() && entry != "---").then_some(indent)
}

/// The blanks and line breaks a plain scalar ending at `from` takes up after itself:
/// where they end, and whether a line break was among them (a new line may start a
/// key).
fn plain_blanks(text: &str, from: usize) -> (usize, bool) {
    let b = text.as_bytes();
    let mut i = from;
    let mut leading = false;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' => {}
            b'\n' => leading = true,
            _ => break,
        }
        i += 1;
    }
    (i, leading)
}

/// A tab in the indentation of a line after a plain scalar, left of its indentation.
fn plain_tab(text: &str, from: usize, indent: usize) -> Option<Failure> {
    let b = text.as_bytes();
    let mut column = from - text[..from].rfind('\n').map_or(0, |n| n + 1);
    let mut leading = false;
    for (i, c) in b.iter().enumerate().skip(from) {
        match c {
            b'\t' if leading && column < indent => {
                return Some(Failure::new(
                    i,
                    scanner_error(
                        line_of(text, i),
                        "found a tab character that violates indentation",
                    ),
                ));
            }
            b' ' | b'\t' => column += 1,
            b'\n' => {
                leading = true;
                column = 0;
            }
            b'\r' => {}
            _ => break,
        }
    }
    None
}

/// A tab in a block scalar's indentation (`start` is its `|` or `>`, `parent` the
/// column of the enclosing block collection).
fn block_scalar_tab(text: &str, start: usize, parent: Option<usize>) -> Option<Failure> {
    let header_end = text[start..]
        .find('\n')
        .map_or(text.len(), |n| start + n + 1);
    let header = &text[start..header_end];
    let digit = header
        .bytes()
        .skip(1)
        .take_while(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n' | b'#'))
        .find(u8::is_ascii_digit)
        .map(|d| usize::from(d - b'0'));
    let floor = parent.map_or(0, |p| p + 1);
    let mut indent = digit.map(|d| parent.map_or(d, |p| p + d));
    let mut max_indent = 0;
    let mut offset = header_end;
    for line in text[header_end..].split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let b = line.as_bytes();
        let mut column = 0;
        while column < b.len() && b[column] == b' ' && indent.is_none_or(|n| column < n) {
            column += 1;
        }
        max_indent = max_indent.max(column);
        let next = b.get(column).copied();
        if next == Some(b'\t') && indent.is_none_or(|n| column < n) {
            return Some(Failure::new(
                at + column,
                scanner_error(
                    line_of(text, at),
                    "found a tab character where an indentation space is expected",
                ),
            ));
        }
        let empty = matches!(next, None | Some(b'\n' | b'\r'));
        if empty {
            continue;
        }
        match indent {
            None => indent = Some(max_indent.max(floor).max(1)),
            Some(n) if column < n => return None,
            Some(_) => {}
        }
    }
    None
}
