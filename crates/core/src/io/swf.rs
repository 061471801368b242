//! Standard Workload Format: the raw columns of a trace, parsed in one pass.
//!
//! This reader only tokenises: it checks that every job line has at least 18 numeric fields and
//! returns the fields hpcsched uses, plus the header (its `; Key: value` lines, and the text of
//! its other comment lines). Which jobs to keep (unknown run time, sizes, the machine size) is
//! decided by the Python reader, where the options live.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::mpsc;

use flate2::read::MultiGzDecoder;

use crate::error::{CoreError, Result};
use crate::model::MAX_TIME;

/// Number of fields of a valid SWF job line; extra fields are ignored.
pub const SWF_FIELDS: usize = 18;

/// Names of the 18 SWF fields, 1-based in the standard; used in error messages.
pub const FIELD_NAMES: [&str; SWF_FIELDS] = [
    "job id",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average cpu time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable",
    "queue",
    "partition",
    "preceding job",
    "think time",
];

/// A line that could not be read, kept when parsing leniently.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    pub line: u64,
    pub field: Option<String>,
    pub reason: String,
}

/// The raw columns of the job lines, in file order.
#[derive(Debug, Clone, Default)]
pub struct SwfTable {
    /// `(key, value)` of every `; Key: value` header line, in file order.
    pub header: Vec<(String, String)>,
    /// The text (trimmed, without the `;`) of every other non-empty comment line, in file
    /// order: free text such as the archive's cleaning filters (`job<=14 (14 jobs removed)`).
    pub comments: Vec<String>,
    pub job_id: Vec<i64>,
    pub submit: Vec<f64>,
    /// The wait the site recorded (field 3), as written: -1 when unknown.
    pub wait: Vec<f64>,
    pub run_time: Vec<f64>,
    pub allocated_procs: Vec<f64>,
    pub requested_procs: Vec<f64>,
    pub requested_time: Vec<f64>,
    /// Field 10, kilobytes per processor as written: -1 when unknown.
    pub requested_memory: Vec<f64>,
    pub status: Vec<i64>,
    pub user: Vec<i64>,
    pub group: Vec<i64>,
    pub queue: Vec<i64>,
    pub partition: Vec<i64>,
    /// 1-based line number of each job in the file.
    pub line: Vec<u64>,
    /// Lines skipped as malformed (only when lenient).
    pub malformed: Vec<Malformed>,
}

fn field_label(index: usize) -> String {
    format!("{} ({})", index + 1, FIELD_NAMES[index])
}

/// The longest line a trace may hold (bytes): a job line is 18 short numbers, a header line a
/// key and a sentence. Past this the input is not an SWF trace (a binary file, a gzip bomb of
/// NUL bytes), and reading stops there rather than buffering an endless "line".
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// How much larger than its compressed file a gzip trace may grow: real traces compress 5 to
/// 25 times; a file that expands past this (and past [`MIN_INFLATED_CAP`]) is refused early.
pub const MAX_INFLATION: u64 = 64;

/// Decompressed size always allowed, whatever the compressed size (small files).
pub const MIN_INFLATED_CAP: u64 = 32 << 20;

/// Characters of an offending token quoted in an error message.
pub const QUOTED_CHARS: usize = 40;

/// Decompressed bytes a gzip file of `compressed` bytes may expand to.
pub fn inflated_cap(compressed: u64) -> u64 {
    MIN_INFLATED_CAP.max(compressed.saturating_mul(MAX_INFLATION))
}

/// `token` for an error message: at most [`QUOTED_CHARS`] characters, quoted, an ellipsis and
/// the total length when cut.
pub fn quoted(token: &[u8]) -> String {
    let text = String::from_utf8_lossy(&token[..token.len().min(4 * QUOTED_CHARS)]);
    let shown: String = text.chars().take(QUOTED_CHARS).collect();
    if shown.len() < token.len() {
        format!("{shown:?}... ({} bytes)", token.len())
    } else {
        format!("{shown:?}")
    }
}

/// Parses an SWF trace held in memory. With `lenient`, malformed lines are skipped and listed;
/// otherwise the first one is an error naming its line and field.
pub fn parse_swf(data: &[u8], lenient: bool) -> Result<SwfTable> {
    let mut parser = SwfParser::new(lenient, data.len());
    parser.push(data)?;
    parser.finish()
}

/// Reads and parses an SWF file, plain or gzip (recognised by its magic bytes), in chunks: memory
/// holds the columns and one chunk, never the whole text. A gzip file is decompressed on a
/// second thread while this one parses (both take about as long); it may expand to
/// [`inflated_cap`] of its size.
pub fn parse_swf_file(path: &Path, lenient: bool) -> Result<SwfTable> {
    let io_error = |e: std::io::Error| CoreError::input(format!("cannot read file: {e}"));
    let file = File::open(path).map_err(io_error)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let gzip = reader
        .fill_buf()
        .map_err(io_error)?
        .starts_with(&[0x1f, 0x8b]);
    if !gzip {
        let mut parser = SwfParser::new(lenient, size as usize);
        loop {
            let mut chunk = Vec::with_capacity(CHUNK);
            let read = (&mut reader)
                .take(CHUNK as u64)
                .read_to_end(&mut chunk)
                .map_err(io_error)?;
            if read == 0 {
                return parser.finish();
            }
            parser.push(&chunk)?;
        }
    }
    parse_gzip(reader, size, inflated_cap(size), lenient)
}

/// Parses a gzip stream of `size` compressed bytes that may expand to `cap` bytes.
fn parse_gzip(reader: impl Read + Send, size: u64, cap: u64, lenient: bool) -> Result<SwfTable> {
    let (sender, chunks) = mpsc::sync_channel::<std::io::Result<Vec<u8>>>(4);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut decoder = MultiGzDecoder::new(reader);
            loop {
                let mut chunk = Vec::with_capacity(CHUNK);
                match (&mut decoder).take(CHUNK as u64).read_to_end(&mut chunk) {
                    Ok(0) => break,
                    Ok(_) => {
                        if sender.send(Ok(chunk)).is_err() {
                            break; // the parser stopped on an error
                        }
                    }
                    Err(e) => {
                        let _ = sender.send(Err(e));
                        break;
                    }
                }
            }
        });
        let mut parser = SwfParser::new(lenient, (size as usize).saturating_mul(8));
        let mut inflated = 0u64;
        for chunk in chunks {
            let chunk = chunk.map_err(|e| CoreError::input(format!("corrupt gzip data: {e}")))?;
            inflated += chunk.len() as u64;
            if inflated > cap {
                return Err(CoreError::input(format!(
                    "decompresses to more than {} MiB (over {}x its {} bytes): not an SWF trace; \
                     decompress it yourself to read it anyway",
                    cap >> 20,
                    cap / size.max(1),
                    size
                )));
            }
            // Dropping `chunks` on an error stops the decoder thread at its next send.
            parser.push(&chunk)?;
        }
        parser.finish()
    })
}

/// Decompressed bytes handed from the decoder thread to the parser at a time.
const CHUNK: usize = 1 << 20;

/// Incremental parser: fed whole lines, keeps the line count across calls.
struct SwfParser {
    table: SwfTable,
    lenient: bool,
    lines_seen: u64,
    /// The start of a line cut by the end of the last chunk.
    pending: Vec<u8>,
    /// Nothing was pushed yet (a UTF-8 byte-order mark may open the text).
    at_start: bool,
}

impl SwfParser {
    fn new(lenient: bool, expected_bytes: usize) -> Self {
        let mut table = SwfTable::default();
        let approx_lines = expected_bytes / 100 + 1;
        for col in [
            &mut table.submit,
            &mut table.wait,
            &mut table.run_time,
            &mut table.allocated_procs,
            &mut table.requested_procs,
            &mut table.requested_time,
            &mut table.requested_memory,
        ] {
            col.reserve(approx_lines);
        }
        SwfParser {
            table,
            lenient,
            lines_seen: 0,
            pending: Vec::new(),
            at_start: true,
        }
    }

    /// Parses the complete lines of `chunk` (after what an earlier chunk left unfinished) and
    /// keeps its last, unfinished line for the next call.
    fn push(&mut self, mut chunk: &[u8]) -> Result<()> {
        if self.at_start {
            // A byte-order mark (as some editors write) is not part of the first line: with it,
            // a header line would be malformed, or silently dropped with --lenient.
            if self.pending.len() + chunk.len() < UTF8_BOM.len() {
                self.pending.extend_from_slice(chunk);
                return Ok(());
            }
            self.at_start = false;
            if !self.pending.is_empty() {
                let mut head = std::mem::take(&mut self.pending);
                head.extend_from_slice(chunk);
                return self.push_owned(head);
            }
            chunk = chunk.strip_prefix(UTF8_BOM).unwrap_or(chunk);
        }
        let Some(last) = chunk.iter().rposition(|&b| b == b'\n') else {
            self.pending.extend_from_slice(chunk);
            return self.check_pending();
        };
        if self.pending.is_empty() {
            self.feed(&chunk[..=last])?;
        } else {
            let mut lines = std::mem::take(&mut self.pending);
            lines.extend_from_slice(&chunk[..=last]);
            self.feed(&lines)?;
            lines.clear();
            self.pending = lines;
        }
        self.pending.extend_from_slice(&chunk[last + 1..]);
        self.check_pending()
    }

    fn push_owned(&mut self, head: Vec<u8>) -> Result<()> {
        let body = head.strip_prefix(UTF8_BOM).unwrap_or(&head);
        self.push(body)
    }

    /// The unfinished line must stay within [`MAX_LINE_BYTES`]; the lines before it are in.
    fn check_pending(&self) -> Result<()> {
        if self.pending.len() > MAX_LINE_BYTES {
            return Err(line_too_long(self.lines_seen + 1));
        }
        Ok(())
    }

    fn finish(mut self) -> Result<SwfTable> {
        let rest = std::mem::take(&mut self.pending);
        self.feed(&rest)?;
        Ok(self.table)
    }

    /// Parses `data`, which ends at a line boundary (or at the end of the file).
    fn feed(&mut self, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let data = data.strip_suffix(b"\n").unwrap_or(data);
        let mut fields = [0f64; SWF_FIELDS];
        for raw in data.split(|&b| b == b'\n') {
            self.lines_seen += 1;
            let line_no = self.lines_seen;
            if raw.len() > MAX_LINE_BYTES {
                return Err(line_too_long(line_no));
            }
            let line = trim_ascii(raw);
            if line.is_empty() {
                continue;
            }
            if line[0] == b';' {
                match parse_header(&line[1..]) {
                    Some(entry) => self.table.header.push(entry),
                    None => {
                        let text = trim_ascii(&line[1..]);
                        if !text.is_empty() {
                            let text = String::from_utf8_lossy(text).into_owned();
                            self.table.comments.push(text);
                        }
                    }
                }
                continue;
            }
            match parse_job_line(line, &mut fields) {
                Ok(()) => push_job(&mut self.table, &fields, line_no),
                Err((field, reason)) => {
                    let problem = Malformed {
                        line: line_no,
                        field,
                        reason,
                    };
                    if !self.lenient {
                        return Err(CoreError::InvalidInput {
                            reason: problem.reason,
                            line: Some(problem.line),
                            field: problem.field,
                        });
                    }
                    self.table.malformed.push(problem);
                }
            }
        }
        Ok(())
    }
}

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

fn line_too_long(line: u64) -> CoreError {
    CoreError::InvalidInput {
        reason: format!(
            "longer than {} KiB: not an SWF trace (binary or corrupt data?)",
            MAX_LINE_BYTES >> 10
        ),
        line: Some(line),
        field: None,
    }
}

fn push_job(table: &mut SwfTable, f: &[f64; SWF_FIELDS], line: u64) {
    table.job_id.push(f[0] as i64);
    table.submit.push(f[1]);
    table.wait.push(f[2]);
    table.run_time.push(f[3]);
    table.allocated_procs.push(f[4]);
    table.requested_procs.push(f[7]);
    table.requested_time.push(f[8]);
    table.requested_memory.push(f[9]);
    table.status.push(f[10] as i64);
    table.user.push(f[11] as i64);
    table.group.push(f[12] as i64);
    table.queue.push(f[14] as i64);
    table.partition.push(f[15] as i64);
    table.line.push(line);
}

type LineProblem = (Option<String>, String);

fn parse_job_line(
    line: &[u8],
    out: &mut [f64; SWF_FIELDS],
) -> std::result::Result<(), LineProblem> {
    let mut count = 0usize;
    for token in line
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
    {
        if count < SWF_FIELDS {
            out[count] = parse_number(token).ok_or_else(|| {
                (
                    Some(field_label(count)),
                    format!("not a number: {}", quoted(token)),
                )
            })?;
        }
        count += 1;
    }
    if count >= SWF_FIELDS {
        check_ranges(out)?;
    }
    if count < SWF_FIELDS {
        return Err((
            None,
            format!("expected {SWF_FIELDS} fields, found {count} (a short or truncated line)"),
        ));
    }
    Ok(())
}

/// Largest integer every f64 holds exactly: ids beyond it would be read as another id.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Fields whose values become integers (id, status, user, group, queue, partition) must be
/// integers within 2^53 (1e30 would silently become i64::MAX); times (submit, wait, run and
/// requested time) within [`MAX_TIME`].
fn check_ranges(fields: &[f64; SWF_FIELDS]) -> std::result::Result<(), LineProblem> {
    for index in [0usize, 10, 11, 12, 14, 15] {
        let value = fields[index];
        if value.fract() != 0.0 || value.abs() > MAX_EXACT_INTEGER {
            return Err((
                Some(field_label(index)),
                format!("must be an integer within +-2^53, not {value:e}"),
            ));
        }
    }
    for index in [1usize, 2, 3, 8] {
        let value = fields[index];
        if value.abs() > MAX_TIME {
            return Err((
                Some(field_label(index)),
                format!("{value:e} s is out of range (times must be within +-1e11 s)"),
            ));
        }
    }
    Ok(())
}

fn parse_number(token: &[u8]) -> Option<f64> {
    // Fast path: plain (possibly negative) integers, the vast majority of SWF fields.
    let (negative, digits) = match token.first() {
        Some(b'-') => (true, &token[1..]),
        _ => (false, token),
    };
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let value = digits
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')) as f64;
        return Some(if negative { -value } else { value });
    }
    let text = std::str::from_utf8(token).ok()?;
    let value: f64 = text.parse().ok()?;
    value.is_finite().then_some(value)
}

fn parse_header(rest: &[u8]) -> Option<(String, String)> {
    let text = String::from_utf8_lossy(rest);
    let (key, value) = text.split_once(':')?;
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    Some((key.to_string(), value.trim().to_string()))
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "1 0 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1";

    #[test]
    fn reads_header_and_fields() {
        let text = format!("; MaxNodes: 338 (batch partition)\n;\n{LINE}\n  \n");
        let t = parse_swf(text.as_bytes(), false).unwrap();
        assert_eq!(
            t.header,
            vec![("MaxNodes".into(), "338 (batch partition)".into())]
        );
        assert_eq!(t.job_id, vec![1]);
        assert_eq!(t.run_time, vec![100.0]);
        assert_eq!(t.requested_time, vec![200.0]);
        assert_eq!(t.user, vec![3]);
        assert_eq!(t.line, vec![3]);
    }

    #[test]
    fn the_recorded_wait_is_read_as_written() {
        let text = format!("{LINE}\n2 10 -1 100 4 -1 -1 4 200 -1 0 3 1 -1 1 1 -1 -1\n3 20 7.5 1 1 -1 -1 1 9 -1 1 3 1 -1 1 1 -1 -1\n");
        let t = parse_swf(text.as_bytes(), false).unwrap();
        assert_eq!(t.wait, vec![5.0, -1.0, 7.5]);
        assert_eq!(t.status, vec![1, 0, 1]);
    }

    #[test]
    fn keyless_comment_lines_are_kept_and_key_lines_are_not() {
        let text = format!(
            "; Version: 2.2\n;\n;       The filter used to produce it was\n\
             ;         user=135 and (job>=47421 and job<=50307) (2080 jobs removed)\n\
             ;  submit<=2012-02-03 00:00:00 (272392 jobs removed)\n\
             ;     MaxQueues: 1\n;\t\n{LINE}\n; trailing note\n"
        );
        let t = parse_swf(text.as_bytes(), false).unwrap();
        assert_eq!(
            t.comments,
            vec![
                "The filter used to produce it was",
                "user=135 and (job>=47421 and job<=50307) (2080 jobs removed)",
                "submit<=2012-02-03 00:00:00 (272392 jobs removed)",
                "trailing note",
            ]
        );
        assert_eq!(
            t.header,
            vec![
                ("Version".into(), "2.2".into()),
                ("MaxQueues".into(), "1".into())
            ]
        );
        assert_eq!(t.job_id, vec![1]);
    }

    #[test]
    fn extra_fields_are_ignored_and_floats_accepted() {
        let text = "2 1.5 0 552.21 8 -1 -1 8 43200 -1 1 4 1 -1 -1 1 -1 -1 99 98\n";
        let t = parse_swf(text.as_bytes(), false).unwrap();
        assert_eq!(t.submit, vec![1.5]);
        assert_eq!(t.run_time, vec![552.21]);
    }

    #[test]
    fn non_numeric_field_names_line_and_field() {
        let text = format!("{LINE}\n1 0 5 abc 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1\n");
        let err = parse_swf(text.as_bytes(), false).unwrap_err();
        match err {
            CoreError::InvalidInput { line, field, .. } => {
                assert_eq!(line, Some(2));
                assert_eq!(field.as_deref(), Some("4 (run time)"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn gzip_files_parse_like_plain_text_across_chunk_boundaries() {
        use std::io::Write;
        let mut text = String::from("; MaxProcs: 4\n");
        for i in 0..60_000 {
            text.push_str(&format!(
                "{i} {i} 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1\n"
            ));
        }
        let dir = std::env::temp_dir().join(format!("hpcsched-swf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let gz = dir.join("t.swf.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(text.as_bytes()).unwrap();
        std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
        let plain = dir.join("t.swf");
        std::fs::write(&plain, &text).unwrap();
        let a = parse_swf_file(&gz, false).unwrap();
        let b = parse_swf_file(&plain, false).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(a.job_id.len(), 60_000);
        assert_eq!(a.job_id, b.job_id);
        assert_eq!(a.line, b.line);
        assert_eq!(a.line[59_999], 60_001);
        assert_eq!(a.header, b.header);
    }

    #[test]
    fn short_line_is_an_error_or_skipped_when_lenient() {
        let text = format!("{LINE}\n1 0 5 100\n{LINE}\n");
        let err = parse_swf(text.as_bytes(), false).unwrap_err();
        assert!(matches!(err, CoreError::InvalidInput { line: Some(2), .. }));
        let t = parse_swf(text.as_bytes(), true).unwrap();
        assert_eq!(t.job_id.len(), 2);
        assert_eq!(t.malformed.len(), 1);
        assert_eq!(t.malformed[0].line, 2);
    }

    fn reason(err: CoreError) -> (Option<u64>, Option<String>, String) {
        match err {
            CoreError::InvalidInput {
                line,
                field,
                reason,
            } => (line, field, reason),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_byte_order_mark_does_not_hide_the_header() {
        let text = format!("\u{feff}; MaxProcs: 128\n{LINE}\n");
        let t = parse_swf(text.as_bytes(), false).unwrap();
        assert_eq!(t.header, vec![("MaxProcs".into(), "128".into())]);
        // fed a byte at a time, the mark split across chunks is still recognised
        let mut parser = SwfParser::new(false, 0);
        for b in text.as_bytes() {
            parser.push(std::slice::from_ref(b)).unwrap();
        }
        let t = parser.finish().unwrap();
        assert_eq!(t.header.len(), 1);
        assert_eq!(t.job_id, vec![1]);
    }

    #[test]
    fn an_endless_line_fails_early_and_quotes_little() {
        let mut parser = SwfParser::new(false, 0);
        parser.push(format!("{LINE}\n").as_bytes()).unwrap();
        let err = (0..100)
            .map(|_| parser.push(&[0u8; 4096]))
            .find_map(std::result::Result::err)
            .expect("refused within 400 KiB");
        let (line, _, text) = reason(err);
        assert_eq!(line, Some(2));
        assert!(text.contains("longer than 64 KiB"), "{text}");
        // a long token within a line is quoted cut
        let token = "x".repeat(10_000);
        let text = format!("1 0 5 {token} 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1\n");
        let (_, field, text) = reason(parse_swf(text.as_bytes(), false).unwrap_err());
        assert_eq!(field.as_deref(), Some("4 (run time)"));
        assert!(text.len() < 120, "{text}");
        assert!(text.contains("(10000 bytes)"), "{text}");
    }

    #[test]
    fn ids_and_times_past_the_engine_range_are_malformed() {
        for (line, field) in [
            (
                "1e30 0 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1",
                "1 (job id)",
            ),
            (
                "1.5 0 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1",
                "1 (job id)",
            ),
            (
                "1 1e308 5 100 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1",
                "2 (submit time)",
            ),
            (
                "1 0 5e11 100 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1",
                "3 (wait time)",
            ),
            (
                "1 0 5 1e300 4 -1 -1 4 200 -1 1 3 1 -1 1 1 -1 -1",
                "4 (run time)",
            ),
            (
                "1 0 5 100 4 -1 -1 4 1e12 -1 1 3 1 -1 1 1 -1 -1",
                "9 (requested time)",
            ),
            (
                "1 0 5 100 4 -1 -1 4 200 -1 1 1e19 1 -1 1 1 -1 -1",
                "12 (user id)",
            ),
        ] {
            let (at, got, _) = reason(parse_swf(line.as_bytes(), false).unwrap_err());
            assert_eq!((at, got.as_deref()), (Some(1), Some(field)), "{line}");
            assert_eq!(parse_swf(line.as_bytes(), true).unwrap().malformed.len(), 1);
        }
    }

    #[test]
    fn a_gzip_bomb_is_refused_after_its_cap() {
        use std::io::Write;
        // 8 MiB of blank lines: valid text, but a thousand times its compressed size
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&vec![b'\n'; 8 << 20]).unwrap();
        let gz = encoder.finish().unwrap();
        let size = gz.len() as u64;
        assert!(parse_gzip(gz.as_slice(), size, 16 << 20, false).is_ok());
        let err = parse_gzip(gz.as_slice(), size, 2 << 20, false).unwrap_err();
        let (_, _, text) = reason(err);
        assert!(text.contains("decompresses to more than 2 MiB"), "{text}");
        assert_eq!(inflated_cap(1000), MIN_INFLATED_CAP);
        assert_eq!(inflated_cap(1 << 30), 64 << 30);
    }
}
