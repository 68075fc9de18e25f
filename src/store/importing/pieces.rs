//! The input as received, kept compressed.
//!
//! Every paste is kept byte for byte (nothing the user gives is lost), in pieces of up to
//! `import::CHUNK` bytes. Relay transcripts are text that repeats itself (banners, header
//! names, ids, quoted replies), so a piece compressed with zstd at its fastest level takes a
//! fraction of the room: the largest part of a database was the pastes, stored a second time
//! beside the messages parsed from them. A piece that would not get smaller is kept as it is
//! (`zstd = 0`), as are the pieces older databases stored before compression.

use rusqlite::{Connection, params};

use crate::store::StoreError;

/// zstd's fastest level: about as fast as SQLite writes the bytes it saves.
const LEVEL: i32 = 1;

/// `bytes` as stored, and whether they are compressed.
pub(crate) fn pack(bytes: &[u8]) -> (Vec<u8>, bool) {
    match zstd::bulk::compress(bytes, LEVEL) {
        Ok(packed) if packed.len() < bytes.len() => (packed, true),
        _ => (bytes.to_vec(), false),
    }
}

/// The bytes of a stored piece of paste `paste_id`.
pub(crate) fn unpack(stored: Vec<u8>, zstd: bool, paste_id: i64) -> Result<Vec<u8>, StoreError> {
    if !zstd {
        return Ok(stored);
    }
    let damaged = |error| StoreError::Read {
        source_name: format!("the stored paste {paste_id} (damaged)"),
        error,
    };
    // `pack` writes the size in the frame: the output is allocated once, at its size,
    // instead of grown (and its fresh pages zeroed) several times over.
    match zstd::zstd_safe::get_frame_content_size(&stored) {
        Ok(Some(size)) if size <= MAX_PIECE => {
            zstd::bulk::decompress(&stored, size as usize).map_err(damaged)
        }
        _ => zstd::stream::decode_all(stored.as_slice()).map_err(damaged),
    }
}

/// The largest size a frame may claim and be allocated for at once; anything larger (only a
/// damaged frame claims it) is decoded as it streams.
const MAX_PIECE: u64 = 1 << 30;

/// Stores piece `seq` of paste `paste_id` as [`pack`] made it.
pub(crate) fn insert(
    conn: &Connection,
    paste_id: i64,
    seq: i64,
    stored: &[u8],
    zstd: bool,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO paste_pieces (paste_id, seq, bytes, zstd) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![paste_id, seq, stored, zstd])?;
    Ok(())
}

/// Piece `seq` of paste `paste_id`, as received.
pub(crate) fn read(conn: &Connection, paste_id: i64, seq: i64) -> Result<Vec<u8>, StoreError> {
    let (stored, zstd) = read_stored(conn, paste_id, seq)?;
    unpack(stored, zstd, paste_id)
}

/// Piece `seq` of paste `paste_id` as stored, and whether it is compressed: for [`unpack`]
/// on another thread than the one that holds the database.
pub(crate) fn read_stored(
    conn: &Connection,
    paste_id: i64,
    seq: i64,
) -> Result<(Vec<u8>, bool), StoreError> {
    Ok(conn
        .prepare_cached("SELECT bytes, zstd FROM paste_pieces WHERE paste_id = ?1 AND seq = ?2")?
        .query_row(params![paste_id, seq], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

/// The migration to compressed pieces: every piece stored plain is compressed when that
/// makes it smaller.
pub(crate) fn compress_stored(conn: &Connection) -> Result<(), StoreError> {
    let keys: Vec<(i64, i64)> = conn
        .prepare("SELECT paste_id, seq FROM paste_pieces WHERE zstd = 0")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (paste_id, seq) in keys {
        let bytes = read(conn, paste_id, seq)?;
        let (stored, zstd) = pack(&bytes);
        if zstd {
            conn.prepare_cached(
                "UPDATE paste_pieces SET bytes = ?3, zstd = 1 WHERE paste_id = ?1 AND seq = ?2",
            )?
            .execute(params![paste_id, seq, stored])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_piece_reads_back_byte_for_byte(bytes in proptest::collection::vec(any::<u8>(), 0..2048), copies in 1usize..40) {
            let bytes = bytes.repeat(copies);
            let (stored, zstd) = pack(&bytes);
            prop_assert!(stored.len() <= bytes.len());
            prop_assert_eq!(unpack(stored, zstd, 1).unwrap(), bytes);
        }
    }

    #[test]
    fn text_is_kept_compressed_and_a_damaged_piece_is_an_error() {
        let text = "[[A→B v1]]\nbody: |\n  hello\n[[END]]\n".repeat(100);
        let (stored, zstd) = pack(text.as_bytes());
        assert!(zstd && stored.len() * 10 < text.len());
        let err = unpack(b"not zstd".to_vec(), true, 7).unwrap_err();
        assert!(err.to_string().contains("stored paste 7"), "{err}");
    }
}
