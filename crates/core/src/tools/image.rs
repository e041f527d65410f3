//! Images a call gives the model (an MCP server's screenshot, an image file read): only the
//! formats every vision API takes (PNG, JPEG, GIF, WebP), known by their first bytes rather
//! than by what the source claims, and no larger than providers accept. A result keeps the
//! image from every later request, so one that a server would refuse must never get in.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use tokio::io::AsyncReadExt;

use super::ToolEnv;
use super::files::ReadError;
use crate::conversation::data_url;
use crate::local;

/// Largest image sent, in base64 characters: Anthropic's per-image limit (5 MB), which is
/// the lowest of the APIs tandem speaks.
pub(crate) const MAX_BASE64: usize = 5 * 1024 * 1024;

/// Most images one result gives the model, and most image data (base64) in all; the rest
/// are named in its text.
pub(crate) const MAX_PER_RESULT: usize = 8;
pub(crate) const MAX_BASE64_PER_RESULT: usize = 10 * 1024 * 1024;

/// Widest and tallest image sent: Anthropic refuses larger ones (OpenAI and Gemini scale
/// them down).
pub(crate) const MAX_SIDE: usize = 8000;

/// The media type of an image in a format models take, read from its first bytes.
pub(crate) fn sniff(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, ..] => Some("image/png"),
        [0xff, 0xd8, 0xff, ..] => Some("image/jpeg"),
        [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some("image/gif"),
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => Some("image/webp"),
        _ => None,
    }
}

/// An image given as base64 (what MCP sends, line breaks allowed) as a `data:` URL of the
/// type its bytes show, or why it is not sent.
pub fn from_base64(data: &str) -> Result<String, String> {
    let clean: String = data.split_ascii_whitespace().collect();
    if clean.len() > MAX_BASE64 {
        return Err(too_large(clean.len()));
    }
    let bytes = STANDARD
        .decode(&clean)
        .map_err(|_| "not valid base64".to_string())?;
    let mime = checked(&bytes)?;
    Ok(data_url(mime, &clean))
}

/// An image file's bytes as a `data:` URL, or why it is not sent.
pub(crate) fn from_bytes(bytes: &[u8]) -> Result<String, String> {
    let mime = checked(bytes)?;
    let encoded = bytes.len().div_ceil(3) * 4;
    if encoded > MAX_BASE64 {
        return Err(too_large(encoded));
    }
    Ok(data_url(mime, &STANDARD.encode(bytes)))
}

/// The media type of an image a model server takes: one of the four formats, with a header
/// that gives its size, no side past [`MAX_SIDE`].
fn checked(bytes: &[u8]) -> Result<&'static str, String> {
    let mime = sniff(bytes).ok_or_else(not_a_format)?;
    let size = imagesize::blob_size(bytes)
        .map_err(|_| format!("not a readable {mime} (its header is broken)"))?;
    if size.width == 0 || size.height == 0 {
        return Err(format!("not a readable {mime} (it says it is empty)"));
    }
    if size.width > MAX_SIDE || size.height > MAX_SIDE {
        return Err(format!(
            "{}x{} pixels, larger than models take ({MAX_SIDE} on a side)",
            size.width, size.height
        ));
    }
    Ok(mime)
}

/// The names of files `read_file` gives the model as images.
const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// An image file, read on disk (editors read only text), as a `data:` URL; `None` when the
/// file is not named as one or its bytes are not an image a model takes, so it is read as
/// text instead. The read was allowed like any other; a deny rule is checked again here.
pub(crate) async fn read_file(env: &ToolEnv, path: &Path) -> Result<Option<String>, ReadError> {
    let named = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    if !named {
        return Ok(None);
    }
    if let Some(why) = local::unreadable(path).await {
        return Err(ReadError::Other(why.to_string()));
    }
    if (env.scope.unreadable)(path) {
        return Err(ReadError::Other(
            "a deny rule forbids reading it".to_string(),
        ));
    }
    // Opened exactly: the file judged, not one a link planted since leads to.
    let opened = {
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || local::open(&path)).await
    };
    let mut file = match opened {
        Ok(Ok(file)) => tokio::fs::File::from_std(file),
        // Missing, or not ours to open: the text read says which, in the editor's words.
        _ => return Ok(None),
    };
    let mut head = [0u8; 12];
    let got = file.read(&mut head).await.unwrap_or(0);
    if sniff(&head[..got]).is_none() {
        return Ok(None);
    }
    let size = file.metadata().await.map(|m| m.len()).unwrap_or(u64::MAX);
    let encoded = usize::try_from(size.div_ceil(3) * 4).unwrap_or(usize::MAX);
    if encoded > MAX_BASE64 {
        return Err(ReadError::Other(too_large(encoded)));
    }
    // Bounded again as it is read: the file may have grown since.
    let mut bytes = head[..got].to_vec();
    let most = (MAX_BASE64 / 4 * 3) as u64;
    (&mut file)
        .take(most + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| ReadError::Other(e.to_string()))?;
    from_bytes(&bytes).map(Some).map_err(ReadError::Other)
}

fn not_a_format() -> String {
    "not in a format models take (PNG, JPEG, GIF or WebP)".to_string()
}

fn too_large(encoded: usize) -> String {
    format!(
        "too large to send ({:.1} MB encoded; models take up to {} MB)",
        encoded as f64 / 1_048_576.0,
        MAX_BASE64 / 1_048_576
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1x1 PNG.
    const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

    fn png() -> Vec<u8> {
        STANDARD.decode(PIXEL).unwrap()
    }

    /// A PNG header that says `width` x `height`, and nothing after it.
    fn png_header(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = png()[..16].to_vec();
        bytes.extend(width.to_be_bytes());
        bytes.extend(height.to_be_bytes());
        bytes.extend([8, 6, 0, 0, 0]);
        bytes
    }

    #[test]
    fn the_bytes_name_the_type_whatever_the_source_claims() {
        let url = from_base64(PIXEL).unwrap();
        assert!(url.starts_with("data:image/png;base64,"), "{url}");
        assert_eq!(sniff(b"GIF89a...."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\x10\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(sniff(b"<svg xmlns="), None);
    }

    #[test]
    fn what_a_server_would_refuse_is_kept_out() {
        assert!(from_base64("not base64 at all!").is_err());
        assert!(from_base64(&STANDARD.encode(b"<svg/>")).is_err());
        let huge = "A".repeat(MAX_BASE64 + 4);
        assert!(from_base64(&huge).unwrap_err().contains("too large"));
        let mut big = png();
        big.resize(MAX_BASE64, 0);
        assert!(from_bytes(&big).unwrap_err().contains("too large"));
        assert!(from_bytes(&png()).is_ok());
        // Right first bytes, but nothing a server could decode: text an injected model can
        // write as `x.gif`, a bare JPEG marker, a PNG past the size servers take.
        assert!(from_bytes(b"GIF89a this is not an image").is_err());
        assert!(from_bytes(b"RIFF????WEBP").is_err());
        assert!(from_bytes(&[0xff, 0xd8, 0xff]).is_err());
        let tall = from_bytes(&png_header(1, 20_000)).unwrap_err();
        assert!(tall.contains("1x20000 pixels"), "{tall}");
        assert!(from_bytes(&png_header(0, 10)).is_err());
    }

    #[test]
    fn base64_with_line_breaks_is_taken_clean() {
        let wrapped: String = PIXEL
            .as_bytes()
            .chunks(76)
            .map(|c| format!("{}\r\n", std::str::from_utf8(c).unwrap()))
            .collect();
        assert_eq!(
            from_base64(&wrapped).unwrap(),
            format!("data:image/png;base64,{PIXEL}")
        );
    }
}
