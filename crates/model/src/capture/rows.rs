//! Rows for a captured table when no copy of its data exists (`replay
//! --prepare-from-schema`): a value of each column's type, as SQL literals. Key
//! columns take the row's number, so that its primary and unique keys hold; the rest are
//! drawn. Such data has the captured shape and row count, not the captured values: every
//! answer built on it says so.

/// A column as information_schema.COLUMNS describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Column {
    pub name: String,
    /// `int`, `varchar`, `datetime`, ... (DATA_TYPE).
    pub data_type: String,
    /// `int(10) unsigned`, `enum('a','b')`, ... (COLUMN_TYPE).
    pub column_type: String,
    /// Characters (or bytes) at most, for strings.
    pub max_len: u64,
    /// Digits after the point, for decimals.
    pub scale: u64,
    /// `PRI`, `UNI` or `MUL` (COLUMN_KEY).
    pub key: String,
    /// `auto_increment`, `VIRTUAL GENERATED`, ... (EXTRA).
    pub extra: String,
    pub nullable: bool,
}

impl Column {
    /// A generated column takes no value of its own.
    pub fn generated(&self) -> bool {
        let e = self.extra.to_ascii_lowercase();
        e.contains("generated") || e.contains("virtual") || e.contains("stored")
    }

    fn unique(&self) -> bool {
        self.key == "PRI" || self.key == "UNI"
    }
}

/// The value of `c` in row `i` (from 0), drawn from `draw` (a uniform u64); None where
/// the type is one this cannot make (spatial types: NULL where allowed, else the
/// table is left out).
pub fn value(c: &Column, i: u64, draw: u64) -> Option<String> {
    let t = c.data_type.to_ascii_lowercase();
    let unsigned = c.column_type.to_ascii_lowercase().contains("unsigned");
    let int = |max: u64| {
        let n = if c.unique() { i + 1 } else { draw % max.max(1) + 1 };
        n.min(max).to_string()
    };
    Some(match t.as_str() {
        "tinyint" => int(if unsigned { 255 } else { 127 }),
        "smallint" => int(if unsigned { 65_535 } else { 32_767 }),
        "mediumint" => int(if unsigned { 16_777_215 } else { 8_388_607 }),
        "int" | "integer" => int(if unsigned { 4_294_967_295 } else { 2_147_483_647 }),
        "bigint" => int(i64::MAX as u64),
        "decimal" | "numeric" | "float" | "double" | "real" => {
            let whole = if c.unique() { i + 1 } else { draw % 10_000 };
            match c.scale {
                0 => whole.to_string(),
                s => format!(
                    "{whole}.{:0width$}",
                    (draw / 10_000) % 10u64.pow(s.min(6) as u32),
                    width = s.min(6) as usize
                ),
            }
        }
        "bit" => "0".into(),
        "year" => (1970 + draw % 150).to_string(),
        "date" => format!("'{}'", date(i, draw)),
        "datetime" | "timestamp" => {
            format!("'{} {:02}:{:02}:{:02}'", date(i, draw), draw % 24, draw / 24 % 60, draw / 1440 % 60)
        }
        "time" => format!("'{:02}:{:02}:{:02}'", draw % 24, draw / 24 % 60, draw / 1440 % 60),
        "enum" => format!("'{}'", first_choice(&c.column_type).unwrap_or_default()),
        "set" => "''".into(),
        "json" => "'{}'".into(),
        "char" | "varchar" | "tinytext" | "text" | "mediumtext" | "longtext" | "binary" | "varbinary" | "tinyblob"
        | "blob" | "mediumblob" | "longblob" => format!("'{}'", text(c, i, draw)),
        _ if c.nullable => "NULL".into(),
        _ => return None,
    })
}

/// A date in 2020-2029, the row's own for a key.
fn date(i: u64, draw: u64) -> String {
    let d = if draw == 0 { i } else { draw } % 3650;
    format!("{}-{:02}-{:02}", 2020 + d / 365, d % 365 / 31 % 12 + 1, d % 28 + 1)
}

/// Letters and digits up to the column's length (32 at most); a key's starts with the
/// row's number, so that no two rows share it.
fn text(c: &Column, i: u64, draw: u64) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let len = c.max_len.clamp(1, 32) as usize;
    let mut s = if c.unique() { format!("{i:x}-") } else { String::new() };
    let mut x = draw | 1;
    while s.len() < len {
        // xorshift: the draw spread over the characters.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push(ALPHABET[(x % ALPHABET.len() as u64) as usize] as char);
    }
    s.truncate(len);
    s
}

/// `enum('a','b')`'s first value.
fn first_choice(column_type: &str) -> Option<String> {
    let inner = column_type.split_once('(')?.1;
    let first = inner.split(',').next()?.trim().trim_end_matches(')');
    Some(first.trim_matches('\'').replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(data_type: &str, column_type: &str, key: &str, max_len: u64) -> Column {
        Column {
            name: "c".into(),
            data_type: data_type.into(),
            column_type: column_type.into(),
            max_len,
            key: key.into(),
            ..Default::default()
        }
    }

    /// Keys hold (the row's number), values fit their columns, and a type it cannot
    /// make is NULL where allowed, else no value.
    #[test]
    fn every_type_gets_a_value_that_fits() {
        let id = col("int", "int(11)", "PRI", 0);
        assert_eq!((value(&id, 0, 99).unwrap(), value(&id, 41, 7).unwrap()), ("1".into(), "42".into()));
        let k = col("int", "int(10) unsigned", "MUL", 0);
        assert!(value(&k, 0, u64::MAX).unwrap().parse::<u64>().unwrap() <= 4_294_967_295);
        assert_eq!(value(&col("tinyint", "tinyint(4)", "", 0), 0, 1000).unwrap(), "112");
        let name = col("varchar", "varchar(8)", "UNI", 8);
        let (a, b) = (value(&name, 1, 5).unwrap(), value(&name, 2, 5).unwrap());
        assert!(a != b && a.len() == 10 && a.starts_with("'1-"), "{a} {b}");
        let pad = col("char", "char(60)", "", 60);
        assert_eq!(value(&pad, 0, 3).unwrap().len(), 34, "32 characters at most, quoted");
        let price = Column { scale: 2, ..col("decimal", "decimal(10,2)", "", 0) };
        assert!(value(&price, 0, 123_456_789).unwrap().contains('.'));
        assert!(value(&col("datetime", "datetime", "", 0), 3, 77).unwrap().starts_with("'202"));
        assert_eq!(value(&col("enum", "enum('new','paid')", "", 0), 0, 1).unwrap(), "'new'");
        let spatial = col("point", "point", "", 0);
        assert_eq!(value(&spatial, 0, 1), None);
        assert_eq!(value(&Column { nullable: true, ..spatial }, 0, 1).as_deref(), Some("NULL"));
        let generated = Column { extra: "VIRTUAL GENERATED".into(), ..col("int", "int", "", 0) };
        assert!(generated.generated());
    }
}
