//! Encoding pieces of the MySQL client/server protocol: length-encoded integers and
//! strings, column definitions, and result rows in text and binary form. Pure.

use super::error::Error;

/// A decoded column value (only for statements whose rows are read).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Float(f64),
    /// Strings, decimals, and dates/times in their wire form.
    Bytes(Vec<u8>),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::UInt(v) => i64::try_from(*v).ok(),
            Value::Float(f) => Some(*f as i64),
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
            Value::Null => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::UInt(v) => Some(*v as f64),
            Value::Float(f) => Some(*f),
            Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
            Value::Null => None,
        }
    }
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// Reads a length-encoded integer at `pos`, advancing it.
pub fn lenenc_int(p: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *p.get(*pos)?;
    let (len, v) = match first {
        0..=0xfa => (1, first as u64),
        0xfc => (3, u16::from_le_bytes([*p.get(*pos + 1)?, *p.get(*pos + 2)?]) as u64),
        0xfd => (4, u32::from_le_bytes([*p.get(*pos + 1)?, *p.get(*pos + 2)?, *p.get(*pos + 3)?, 0]) as u64),
        0xfe => {
            let b = p.get(*pos + 1..*pos + 9)?;
            (9, u64::from_le_bytes(b.try_into().ok()?))
        }
        _ => return None, // 0xfb is NULL in text rows; 0xff is not a length
    };
    *pos += len;
    Some(v)
}

fn lenenc_bytes<'a>(p: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let n = lenenc_int(p, pos)? as usize;
    let b = p.get(*pos..*pos + n)?;
    *pos += n;
    Some(b)
}

pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xfa => out.push(v as u8),
        0xfb..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

pub fn put_lenenc_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_lenenc_int(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// The type byte of a column definition (Protocol::ColumnDefinition41).
pub fn column_type(p: &[u8]) -> Option<u8> {
    let mut pos = 0;
    for _ in 0..6 {
        lenenc_bytes(p, &mut pos)?; // catalog, schema, table, org_table, name, org_name
    }
    // 0x0c, charset u16, length u32, then the type.
    p.get(pos + 1 + 2 + 4).copied()
}

/// Text-protocol rows kept as they came, one copy of their bytes, to be read later
/// (what libmysql's `mysql_store_result` does for sysbench's scripts).
#[derive(Debug, Default)]
pub struct StoredRows {
    bytes: Vec<u8>,
    /// Each row's range in `bytes`.
    rows: Vec<(usize, usize)>,
    columns: usize,
}

impl StoredRows {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.rows.clear();
        self.columns = 0;
    }

    pub fn push(&mut self, row: &[u8], columns: usize) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(row);
        self.rows.push((start, self.bytes.len()));
        self.columns = columns;
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Row `i`'s values (`None` for NULL) into `out`.
    pub fn values<'a>(&'a self, i: usize, out: &mut Vec<Option<&'a [u8]>>) -> Result<(), Error> {
        out.clear();
        let (start, end) = *self.rows.get(i).ok_or_else(|| Error::protocol("no such row"))?;
        let p = &self.bytes[start..end];
        let mut pos = 0;
        for _ in 0..self.columns {
            if p.get(pos) == Some(&0xfb) {
                pos += 1;
                out.push(None);
                continue;
            }
            out.push(Some(lenenc_bytes(p, &mut pos).ok_or_else(|| Error::protocol("truncated text row"))?));
        }
        Ok(())
    }
}

/// A text-protocol row: each column a length-encoded string or 0xfb for NULL.
pub fn decode_text_row(p: &[u8], columns: usize, out: &mut Vec<Value>) -> Result<(), Error> {
    out.clear();
    let mut pos = 0;
    for _ in 0..columns {
        if p.get(pos) == Some(&0xfb) {
            pos += 1;
            out.push(Value::Null);
            continue;
        }
        let b = lenenc_bytes(p, &mut pos).ok_or_else(|| Error::protocol("truncated text row"))?;
        out.push(Value::Bytes(b.to_vec()));
    }
    Ok(())
}

/// A binary-protocol row: 0x00, a NULL bitmap offset by 2 bits, then the values by type.
pub fn decode_binary_row(p: &[u8], types: &[u8], out: &mut Vec<Value>) -> Result<(), Error> {
    out.clear();
    let bad = || Error::protocol("truncated binary row");
    let bitmap_len = (types.len() + 7 + 2) / 8;
    let bitmap = p.get(1..1 + bitmap_len).ok_or_else(bad)?;
    let mut pos = 1 + bitmap_len;
    for (i, &t) in types.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(Value::Null);
            continue;
        }
        let fixed = |n: usize, pos: &mut usize| -> Result<&[u8], Error> {
            let b = p.get(*pos..*pos + n).ok_or_else(bad)?;
            *pos += n;
            Ok(b)
        };
        let v = match t {
            0x01 => Value::Int(fixed(1, &mut pos)?[0] as i8 as i64), // TINY
            0x02 | 0x0d => Value::Int(i16::from_le_bytes(fixed(2, &mut pos)?.try_into().unwrap()) as i64), // SHORT, YEAR
            0x03 | 0x09 => Value::Int(i32::from_le_bytes(fixed(4, &mut pos)?.try_into().unwrap()) as i64), // LONG, INT24
            0x08 => Value::Int(i64::from_le_bytes(fixed(8, &mut pos)?.try_into().unwrap())),               // LONGLONG
            0x04 => Value::Float(f32::from_le_bytes(fixed(4, &mut pos)?.try_into().unwrap()) as f64),
            0x05 => Value::Float(f64::from_le_bytes(fixed(8, &mut pos)?.try_into().unwrap())),
            0x07 | 0x0a | 0x0b | 0x0c => {
                // TIMESTAMP, DATE, TIME, DATETIME: a length byte, then that many bytes.
                let n = *p.get(pos).ok_or_else(bad)? as usize;
                pos += 1;
                Value::Bytes(fixed(n, &mut pos)?.to_vec())
            }
            _ => Value::Bytes(lenenc_bytes(p, &mut pos).ok_or_else(bad)?.to_vec()),
        };
        out.push(v);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips() {
        for v in [0u64, 250, 251, 65_535, 65_536, 16_777_215, 16_777_216, u64::MAX] {
            let mut b = Vec::new();
            put_lenenc_int(&mut b, v);
            let mut pos = 0;
            assert_eq!(lenenc_int(&b, &mut pos), Some(v));
            assert_eq!(pos, b.len());
        }
        assert_eq!(lenenc_int(&[0xfc, 1], &mut 0), None, "truncated");
    }

    #[test]
    fn binary_row_decodes_types_and_nulls() {
        // Columns: LONG 7, NULL (VAR_STRING), VAR_STRING "abc", DOUBLE 1.5, LONGLONG -2.
        let types = [0x03, 0xfd, 0xfd, 0x05, 0x08];
        let mut p = vec![0x00];
        // NULL bitmap (offset 2): column 1 -> bit 3.
        p.push(1 << 3);
        p.extend_from_slice(&7i32.to_le_bytes());
        p.extend_from_slice(&[3, b'a', b'b', b'c']);
        p.extend_from_slice(&1.5f64.to_le_bytes());
        p.extend_from_slice(&(-2i64).to_le_bytes());
        let mut out = Vec::new();
        decode_binary_row(&p, &types, &mut out).unwrap();
        assert_eq!(
            out,
            vec![Value::Int(7), Value::Null, Value::Bytes(b"abc".to_vec()), Value::Float(1.5), Value::Int(-2)]
        );
        assert!(decode_binary_row(&p[..6], &types, &mut out).is_err());
    }

    #[test]
    fn text_row_and_column_type() {
        let mut p = Vec::new();
        put_lenenc_bytes(&mut p, b"12");
        p.push(0xfb);
        let mut out = Vec::new();
        decode_text_row(&p, 2, &mut out).unwrap();
        assert_eq!(out[0].as_i64(), Some(12));
        assert_eq!(out[1], Value::Null);
        let mut stored = StoredRows::default();
        stored.push(&p, 2);
        stored.push(&p, 2);
        let mut values = Vec::new();
        stored.values(0, &mut values).unwrap();
        assert_eq!(values, [Some(&b"12"[..]), None]);
        assert!(stored.values(2, &mut values).is_err());

        let mut def = Vec::new();
        for s in ["def", "sbtest", "sbtest1", "sbtest1", "c", "c"] {
            put_lenenc_bytes(&mut def, s.as_bytes());
        }
        def.extend_from_slice(&[0x0c, 45, 0, 120, 0, 0, 0, 0xfe, 0, 0, 0]);
        assert_eq!(column_type(&def), Some(0xfe));
    }
}
