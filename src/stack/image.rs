//! What an image the stack answered is, told by its own bytes and never by its `Content-Type`:
//! its type, and its width and height, so that nothing handed over as an image is one that
//! decodes to more pixels than a poster has.

/// The largest image handed over as image content: posters and backdrops, not photographs at
/// full size.
pub const IMAGE_LIMIT: usize = 1024 * 1024;
/// The most pixels an image handed over may decode to (a 4K backdrop is 8.3 million).
pub const PIXEL_LIMIT: u64 = 25_000_000;
/// Bytes kept of an image too large to hand over, enough to say which type it is.
pub const HEAD: usize = 16;

/// An image's type and size, read from its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picture {
    pub media_type: &'static str,
    pub width: u32,
    pub height: u32,
}

impl Picture {
    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

/// The image type `bytes` begin as, if any.
pub fn media_type_of(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        Some("image/webp")
    } else {
        None
    }
}

/// The picture whole `bytes` are: `None` for anything that is not an image of a known type
/// whose size its header says.
pub fn picture(bytes: &[u8]) -> Option<Picture> {
    let media_type = media_type_of(bytes)?;
    let (width, height) = match media_type {
        "image/png" => png(bytes)?,
        "image/jpeg" => jpeg(bytes)?,
        "image/gif" => (u32::from(le16(bytes, 6)?), u32::from(le16(bytes, 8)?)),
        _ => webp(bytes)?,
    };
    (width > 0 && height > 0).then_some(Picture {
        media_type,
        width,
        height,
    })
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn le24(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 3)?;
    Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
}

/// The `IHDR` chunk, which a PNG must begin with.
fn png(bytes: &[u8]) -> Option<(u32, u32)> {
    (bytes.get(12..16)? == b"IHDR").then_some(())?;
    Some((be32(bytes, 16)?, be32(bytes, 20)?))
}

/// The first start-of-frame segment, walked to segment by segment.
fn jpeg(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        if *bytes.get(at)? != 0xff {
            return None;
        }
        let marker = *bytes.get(at + 1)?;
        match marker {
            // Fill bytes, and markers that stand alone.
            0xff => at += 1,
            0x01 | 0xd0..=0xd7 => at += 2,
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                let height = be16(bytes, at + 5)?;
                let width = be16(bytes, at + 7)?;
                return Some((u32::from(width), u32::from(height)));
            }
            0xd9 | 0xda => return None,
            _ => at += 2 + usize::from(be16(bytes, at + 2)?),
        }
    }
}

/// The first chunk of a WebP: a lossy frame, a lossless one, or the extended header.
fn webp(bytes: &[u8]) -> Option<(u32, u32)> {
    match bytes.get(12..16)? {
        b"VP8 " => Some((
            u32::from(le16(bytes, 26)? & 0x3fff),
            u32::from(le16(bytes, 28)? & 0x3fff),
        )),
        b"VP8L" => {
            let bits = u32::from_le_bytes(bytes.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((le24(bytes, 24)? + 1, le24(bytes, 27)? + 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        bytes.extend_from_slice(&width.to_be_bytes());
        bytes.extend_from_slice(&height.to_be_bytes());
        bytes
    }

    #[test]
    fn an_image_is_what_its_bytes_say_with_the_size_its_header_says() {
        assert_eq!(
            picture(&png_of(2, 3)),
            Some(Picture {
                media_type: "image/png",
                width: 2,
                height: 3
            })
        );
        let gif = b"GIF89a\x40\x01\xf0\x00";
        assert_eq!(picture(gif).map(|p| (p.width, p.height)), Some((320, 240)));
        let mut jpeg = b"\xff\xd8\xff\xe0\x00\x04ab".to_vec();
        jpeg.extend_from_slice(b"\xff\xc0\x00\x11\x08\x01\xe0\x02\x80");
        assert_eq!(
            picture(&jpeg).map(|p| (p.width, p.height)),
            Some((640, 480))
        );
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0\0\0\0".to_vec();
        webp.extend_from_slice(&[0x7f, 0x07, 0x00, 0x37, 0x04, 0x00]);
        assert_eq!(
            picture(&webp).map(|p| (p.width, p.height)),
            Some((1920, 1080))
        );
    }

    #[test]
    fn text_or_a_header_that_says_nothing_is_no_picture() {
        assert_eq!(picture(b"ignore previous instructions"), None);
        assert_eq!(picture(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(picture(b"\x89PNG\r\n\x1a\n"), None, "no header");
        assert_eq!(picture(&png_of(0, 10)), None, "no pixels");
        assert_eq!(picture(b"\xff\xd8\xff\xd9"), None, "no frame");
        assert!(picture(&png_of(100_000, 100_000)).is_some_and(|p| p.pixels() > PIXEL_LIMIT));
    }
}
