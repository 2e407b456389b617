//! Reading and writing results files. Writes are atomic (a temporary file, then a rename or a
//! link), and a new results file never replaces an existing one: a measurement, once written, is
//! only ever added to.

use super::{Results, READABLE_VERSIONS};
use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// gzip's first two bytes (RFC 1952 §2.3.1, ID1 and ID2): a file that starts with them is read
/// through gzip, whatever its name.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a results file, plain JSON or gzip'd JSON, refusing other schema versions with a message
/// that says what to do.
pub fn read(path: &Path) -> Result<Results> {
    let (text, gzip) = read_text_of(path)?;
    parse(&text).map_err(|e| {
        let gzip = gzip.then_some(" (in its JSON, once unzipped)");
        anyhow!("{}: {e}{}", path.display(), gzip.unwrap_or(""))
    })
}

/// A results file's JSON text, unzipped where it is gzip'd (for readers of the JSON itself).
pub fn read_text(path: &Path) -> Result<String> {
    read_text_of(path).map(|(text, _)| text)
}

/// The text, and whether it was gzip'd.
fn read_text_of(path: &Path) -> Result<(String, bool)> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let gzip = bytes.starts_with(&GZIP_MAGIC);
    let text = text(bytes).with_context(|| format!("{}: cannot read", path.display()))?;
    Ok((text, gzip))
}

/// The most a gzip'd results file may unzip to: a default run is about 3 MB of JSON, so this only
/// stops a small file that would unzip to gigabytes.
const MAX_UNZIPPED: u64 = 1 << 30;

/// A file's JSON text: unzipped where it is gzip'd (one whole stream, checked against its CRC and
/// length, with nothing after it: a file cut short or with bytes added is an error, not part of a
/// file).
fn text(bytes: Vec<u8>) -> Result<String> {
    let bytes = if bytes.starts_with(&GZIP_MAGIC) {
        gunzip(&bytes)?
    } else {
        bytes
    };
    String::from_utf8(bytes)
        .map_err(|e| anyhow!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// One gzip member's data (RFC 1952 section 2.3), and nothing after it. The deflate stream is
/// unzipped straight into a buffer of the length the trailer states, uninitialised until written:
/// reading through a `Read` zeroed each file's 4 MB first and grew the buffer as it went, a tenth
/// of a history's render.
fn gunzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let body = gzip_body(bytes).context("not a whole gzip stream")?;
    let stream = &bytes[body..];
    // ISIZE, the data's length modulo 2^32, is the last four bytes of a single member: a hint
    // for the buffer (bounded), checked against what the stream gives.
    let stated = bytes
        .len()
        .checked_sub(4)
        .map(|i| u32::from_le_bytes(bytes[i..].try_into().unwrap_or_default()))
        .unwrap_or_default();
    // Deflate gives at most 1,032 bytes a byte (zlib's technical notes): a larger statement is
    // not believed.
    let hint = (stated as usize)
        .min(stream.len().saturating_mul(1032))
        .min(MAX_UNZIPPED as usize);
    let mut out = Vec::with_capacity(hint + 1);
    let mut inflate = flate2::Decompress::new(false);
    loop {
        let at = inflate.total_in() as usize;
        if out.len() == out.capacity() {
            if out.len() as u64 > MAX_UNZIPPED {
                bail!("unzips to more than {MAX_UNZIPPED} bytes");
            }
            let room = MAX_UNZIPPED as usize + 1 - out.len();
            out.reserve(out.len().max(1 << 16).min(room));
        }
        let status = inflate
            .decompress_vec(&stream[at..], &mut out, flate2::FlushDecompress::Finish)
            .context("not a whole gzip stream")?;
        match status {
            flate2::Status::StreamEnd => break,
            // No progress with room to write: the input ended inside the stream.
            _ if inflate.total_in() as usize == at && out.len() < out.capacity() => {
                bail!("not a whole gzip stream: it ends early")
            }
            _ => {}
        }
    }
    if out.len() as u64 > MAX_UNZIPPED {
        bail!("unzips to more than {MAX_UNZIPPED} bytes");
    }
    let rest = &stream[inflate.total_in() as usize..];
    let Some(trailer) = rest.get(..8) else {
        bail!("not a whole gzip stream: its trailer is cut short");
    };
    let word =
        |i: usize| u32::from_le_bytes([trailer[i], trailer[i + 1], trailer[i + 2], trailer[i + 3]]);
    let mut crc = flate2::Crc::new();
    crc.update(&out);
    if crc.sum() != word(0) || out.len() as u32 != word(4) {
        bail!("not a whole gzip stream: its CRC or length does not match its data");
    }
    if rest.len() > 8 {
        bail!("{} bytes after its gzip stream", rest.len() - 8);
    }
    Ok(out)
}

/// Where a gzip member's deflate stream starts: after its fixed header and the optional fields its
/// flags announce (RFC 1952 section 2.3.1).
fn gzip_body(bytes: &[u8]) -> Result<usize> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let header = bytes.get(..10).context("its header is cut short")?;
    if header[2] != 8 {
        bail!("compression method {}, not deflate", header[2]);
    }
    let flags = header[3];
    if flags & 0xe0 != 0 {
        bail!("reserved header flags set ({flags:#04x})");
    }
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let len = bytes.get(at..at + 2).context("its header is cut short")?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = bytes
                .get(at..)
                .and_then(|b| b.iter().position(|&c| c == 0))
                .context("its header is cut short")?;
            at += end + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    if at > bytes.len() {
        bail!("its header is cut short");
    }
    Ok(at)
}

fn is_gzip_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".gz"))
}

/// Whether `path` names a results file: `NAME.json`, or `NAME.json.gz`, the same JSON through
/// gzip (what a run writes by default: about half the bytes, since the packed samples are near
/// their entropy and the rest is repetitive JSON).
pub fn is_results_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".json") || n.ends_with(".json.gz"))
}

/// The results files directly in `dir` (not its subfolders), in name order.
pub fn results_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| f.is_file() && is_results_file(f))
        .collect();
    found.sort();
    Ok(found)
}

/// The version alone, for a file that does not read as results (`parse`).
#[derive(serde::Deserialize)]
struct Version {
    #[serde(default)]
    schema_version: Option<serde_json::Value>,
}

/// Parses results JSON (the reader behind `read`, also used by the fuzzer): the whole file
/// straight into its types (building a JSON value of the whole file first took longer than the
/// typed read itself), its version held to those this pqprof reads. Only a file that does not
/// read is read again for its version alone, so that a file of another schema is refused by its
/// version and not by the first field that changed: reading the version first was a second pass
/// over every file.
pub fn parse(text: &str) -> Result<Results> {
    if let Ok(r) = serde_json::from_str::<Results>(text) {
        if READABLE_VERSIONS.contains(&r.schema_version) {
            return Ok(r);
        }
    }
    let version = match serde_json::from_str::<Version>(text) {
        Ok(p) => p.schema_version.and_then(|v| v.as_u64()),
        // Valid JSON that is not an object has no version either.
        Err(e) if e.classify() == serde_json::error::Category::Data => None,
        Err(e) => return Err(anyhow!(e).context("not valid JSON")),
    };
    let v = match version {
        Some(v) if READABLE_VERSIONS.iter().any(|r| u64::from(*r) == v) => v,
        Some(v) => bail!(
            "schema_version {v}, but this pqprof reads schema_version {}; re-run the measurement or use the pqprof that wrote it",
            readable()
        ),
        None => bail!("no schema_version: not a pqprof results file"),
    };
    serde_json::from_str(text).map_err(|e| anyhow!("does not match schema {v}: {e}"))
}

/// "1, 2, 3 or 4".
fn readable() -> String {
    let v = READABLE_VERSIONS.map(|v| v.to_string());
    match v.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn temporary(path: &Path) -> Result<(PathBuf, PathBuf)> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("{}: cannot create folder", dir.display()))?;
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("{}: not a file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    Ok((dir, tmp))
}

fn write_tmp(tmp: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(tmp)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Writes `bytes` to `path` atomically, replacing what is there: a reader sees the old file or
/// the new one, never half of one. For files pqprof owns whole (a site page, an export).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let (_, tmp) = temporary(path)?;
    let result = write_tmp(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("{}: cannot write", path.display()))
}

/// Writes `bytes` to `path` atomically and only if nothing is there yet: the new file appears
/// whole (a hard link of the finished temporary file, which fails if the name is taken).
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let (_, tmp) = temporary(path)?;
    let result = write_tmp(&tmp, bytes).and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            bail!("{}: already exists; pqprof never overwrites a results file (choose another --out, or pass --force)", path.display())
        }
        r => r.with_context(|| format!("{}: cannot write", path.display())),
    }
}

/// The file's bytes, in this pqprof's schema: a file of an older one that gets a section added is
/// written whole in the current form (its arrays packed), so it says the current version. gzip'd
/// where the name ends in `.gz` (with no time or name in its header, so the same results give the
/// same bytes).
fn to_bytes(results: &Results, path: &Path) -> Result<Vec<u8>> {
    let current;
    let results = if results.schema_version == super::SCHEMA_VERSION {
        results
    } else {
        current = Results {
            schema_version: super::SCHEMA_VERSION,
            ..results.clone()
        };
        &current
    };
    let mut bytes = serde_json::to_vec(results)?;
    bytes.push(b'\n');
    if !is_gzip_name(path) {
        return Ok(bytes);
    }
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 2),
        flate2::Compression::default(),
    );
    gz.write_all(&bytes)?;
    Ok(gz.finish()?)
}

/// A new results file; refuses an existing one unless `force`.
pub fn create(path: &Path, results: &Results, force: bool) -> Result<()> {
    let bytes = to_bytes(results, path)?;
    if force {
        write_atomic(path, &bytes)
    } else {
        write_new(path, &bytes)
    }
}

/// Rewrites a results file that was read and extended (a section added): everything it held is
/// still in `results`.
pub fn update(path: &Path, results: &Results) -> Result<()> {
    write_atomic(path, &to_bytes(results, path)?)
}

/// Fails now, with one line, if `dir` cannot take a results file (not after minutes of measuring).
pub fn check_writable(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the results folder", dir.display()))?;
    let probe = dir.join(format!(".pqprof-probe-{}", std::process::id()));
    let r = std::fs::write(&probe, b"");
    let _ = std::fs::remove_file(&probe);
    r.with_context(|| format!("{}: cannot write results there", dir.display()))
}

/// The committed results files in name order: results/, then results/archive/ with `archive`
/// (the runs core's tests read): those git tracks, never a run a user made beside them.
#[cfg(test)]
pub(crate) fn committed(archive: bool) -> Vec<PathBuf> {
    committed_files::tracked_results(archive)
}

#[cfg(test)]
#[path = "../../tests/support/committed.rs"]
mod committed_files;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_file_is_written_whole_in_the_current_schema_with_every_sample() {
        // A committed file of schema 3 (lists), written again: schema 4, packed, the same samples.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
        let (path, old) = results_files(&dir)
            .unwrap()
            .into_iter()
            .filter_map(|p| Some((p.clone(), read(&p).ok()?)))
            .find(|(_, r)| r.schema_version == 3 && r.handshakes.is_some())
            .expect("a committed schema 3 file with handshakes");
        let bytes = to_bytes(&old, Path::new("r.json")).unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(text.contains("\"samples_ns\":\"d1:"));
        let new = parse(text).unwrap();
        assert_eq!(new.schema_version, super::super::SCHEMA_VERSION);
        assert_eq!(new.phases.len(), old.phases.len());
        for (a, b) in new.phases.iter().zip(&old.phases) {
            assert_eq!(a.samples_ns, b.samples_ns);
        }
        let (a, b) = (new.handshakes.unwrap(), old.handshakes.unwrap());
        for (x, y) in a.scenarios.iter().zip(&b.scenarios) {
            assert_eq!(x.totals_ns, y.totals_ns);
        }
        // Packed, the file is smaller than in lists (about two thirds of it).
        assert!(bytes.len() < std::fs::metadata(&path).unwrap().len() as usize * 4 / 5);
    }

    #[test]
    fn a_gz_name_is_written_through_gzip_and_read_back_the_same() {
        let dir = std::env::temp_dir().join(format!("pqprof-io-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../results");
        let old = results_files(&src)
            .unwrap()
            .iter()
            .find_map(|p| read(p).ok().filter(|r| r.handshakes.is_some()))
            .unwrap();
        let (plain, gz) = (dir.join("r.json"), dir.join("r.json.gz"));
        for p in [&plain, &gz] {
            let _ = std::fs::remove_file(p);
            create(p, &old, false).unwrap();
        }
        let (a, b) = (std::fs::read(&plain).unwrap(), std::fs::read(&gz).unwrap());
        assert!(a.starts_with(b"{"));
        assert!(b.starts_with(&GZIP_MAGIC));
        // Smaller by half or more, and byte for byte the same JSON inside.
        assert!(b.len() * 2 < a.len(), "{} against {}", b.len(), a.len());
        assert_eq!(text(b.clone()).unwrap().as_bytes(), a.as_slice());
        let (x, y) = (read(&plain).unwrap(), read(&gz).unwrap());
        assert_eq!(x.phases.len(), y.phases.len());
        for (p, q) in x.phases.iter().zip(&y.phases) {
            assert_eq!(p.samples_ns, q.samples_ns);
        }
        // The same results give the same bytes (no time in the gzip header).
        assert_eq!(to_bytes(&old, &gz).unwrap(), b);
        // Cut short, it is an error that names the file, not half a file.
        std::fs::write(&gz, &b[..b.len() / 2]).unwrap();
        let e = format!("{:#}", read(&gz).unwrap_err());
        assert!(
            e.contains("r.json.gz: cannot read") && e.contains("gzip"),
            "{e}"
        );
        // With bytes after the stream (a second file appended), it is an error too.
        let mut twice = b.clone();
        twice.extend_from_slice(&b);
        std::fs::write(&gz, &twice).unwrap();
        let e = format!("{:#}", read(&gz).unwrap_err());
        assert!(e.contains("bytes after its gzip stream"), "{e}");
        // Written by `gzip` (its header names the file, RFC 1952's FNAME and FCOMMENT), the same.
        let mut named = flate2::GzBuilder::new()
            .filename("r.json")
            .comment("gzip -9")
            .write(Vec::new(), flate2::Compression::best());
        named.write_all(&a).unwrap();
        assert_eq!(
            text(named.finish().unwrap()).unwrap().as_bytes(),
            a.as_slice()
        );
        // Its CRC changed, it is refused.
        let mut bad = b.clone();
        let at = bad.len() - 8;
        bad[at] ^= 1;
        let e = format!("{:#}", text(bad).unwrap_err());
        assert!(e.contains("CRC"), "{e}");
        // Its JSON broken, the error says the place is in the unzipped JSON.
        let mut broken = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        broken
            .write_all(b"{\"schema_version\": 4, \"run\": 3}")
            .unwrap();
        std::fs::write(&gz, broken.finish().unwrap()).unwrap();
        let e = format!("{:#}", read(&gz).unwrap_err());
        assert!(
            e.contains("line 1 column") && e.contains("once unzipped"),
            "{e}"
        );
        // Only .json and .json.gz are results files.
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        std::fs::write(dir.join("r.gz"), "x").unwrap();
        let names: Vec<_> = results_files(&dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["r.json", "r.json.gz"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn write_new_refuses_an_existing_file_and_leaves_it_whole() {
        let dir = std::env::temp_dir().join(format!("pqprof-io-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.json");
        let _ = std::fs::remove_file(&f);
        write_new(&f, b"first").unwrap();
        let e = write_new(&f, b"second").unwrap_err().to_string();
        assert!(e.contains("already exists"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), b"first");
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        write_atomic(&f, b"third").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"third");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn versions_are_checked_before_the_shape() {
        assert!(parse("{\"schema_version\": 99}")
            .unwrap_err()
            .to_string()
            .contains("schema_version 99, but this pqprof reads schema_version 1, 2, 3 or 4"));
        assert!(parse("{}")
            .unwrap_err()
            .to_string()
            .contains("no schema_version"));
        assert!(parse("{\"schema_version\": 2, \"run\": 3}")
            .unwrap_err()
            .to_string()
            .contains("does not match schema 2"));
        assert!(parse("nope")
            .unwrap_err()
            .to_string()
            .contains("not valid JSON"));
    }
}
