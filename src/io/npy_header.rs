//! The `.npy` header: a Python dict literal such as
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`, parsed by a small
//! recursive-descent reader of the Python literal subset NumPy writes (strings, integers,
//! `True`/`False`/`None`, tuples, lists, dicts), and the element types it names.

/// What the header says about the array.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Header {
    /// `descr` as written, e.g. `<f8`; a structured dtype is shown as `[...]`.
    pub descr: String,
    /// The element type, or why it is not supported (`Err(hint)`).
    pub dtype: Result<Dtype, String>,
    /// Column-major when true.
    pub fortran_order: bool,
    /// Dimensions.
    pub shape: Vec<u64>,
}

/// A supported element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Dtype {
    /// Number kind.
    pub kind: Kind,
    /// Bytes per element.
    pub size: usize,
    /// Stored most-significant byte first.
    pub big_endian: bool,
}

/// Number kinds that convert to `f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// IEEE single precision (4 bytes).
    F32,
    /// IEEE double precision (8 bytes).
    F64,
    /// Signed integer, 1, 2, 4 or 8 bytes.
    Int,
    /// Unsigned integer, 1, 2, 4 or 8 bytes.
    Uint,
    /// Boolean, 1 byte (0 or 1).
    Bool,
}

/// Parses the header text (the bytes between the length field and the data).
pub(super) fn parse_header(text: &[u8]) -> Result<Header, String> {
    let mut p = Parser {
        s: text,
        pos: 0,
        depth: 0,
    };
    let value = p.value()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(format!("unexpected text at byte {} after the dict", p.pos));
    }
    let Lit::Dict(entries) = value else {
        return Err("the header is not a dict".into());
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| matches!(k, Lit::Str(s) if s == key))
            .map(|(_, v)| v)
            .ok_or_else(|| format!("missing key '{key}'"))
    };
    let (descr, dtype) = match get("descr")? {
        Lit::Str(s) => (s.clone(), parse_dtype(s)),
        Lit::List(_) => (
            "[...]".to_string(),
            Err(
                "structured (record) arrays are not supported; save a plain numeric 2-D array, \
                 e.g. numpy.column_stack of the fields"
                    .to_string(),
            ),
        ),
        _ => return Err("'descr' is neither a string nor a list".into()),
    };
    let fortran_order = match get("fortran_order")? {
        Lit::Bool(b) => *b,
        _ => return Err("'fortran_order' is not True or False".into()),
    };
    let shape = match get("shape")? {
        Lit::Tuple(items) | Lit::List(items) => items
            .iter()
            .map(|v| match v {
                Lit::Int(n) => Ok(*n),
                _ => Err("'shape' holds something other than non-negative integers".to_string()),
            })
            .collect::<Result<Vec<u64>, String>>()?,
        _ => return Err("'shape' is not a tuple".into()),
    };
    Ok(Header {
        descr,
        dtype,
        fortran_order,
        shape,
    })
}

/// Parses a dtype string such as `<f8`, `>f4`, `|u1`; `Err` holds the hint for the user.
fn parse_dtype(descr: &str) -> Result<Dtype, String> {
    let native_big = cfg!(target_endian = "big");
    let (big_endian, rest) = match descr.as_bytes().first() {
        Some(b'<') => (false, &descr[1..]),
        Some(b'>') => (true, &descr[1..]),
        Some(b'|' | b'=') => (native_big, &descr[1..]),
        _ => (native_big, descr),
    };
    let convert = "convert it first, e.g. numpy.save(path, x.astype(numpy.float64))";
    // The kind is one character, possibly not ASCII in a corrupt header.
    let (kind_char, size_text) = rest.split_at(rest.chars().next().map_or(0, char::len_utf8));
    if kind_char == "O" {
        return Err(format!(
            "the array holds Python objects, not numbers (object arrays cannot be read); {convert}"
        ));
    }
    let size: usize = size_text
        .parse()
        .map_err(|_| format!("it is not a numeric type; {convert}"))?;
    let kind = match kind_char {
        "f" if size == 4 => Kind::F32,
        "f" if size == 8 => Kind::F64,
        "i" if matches!(size, 1 | 2 | 4 | 8) => Kind::Int,
        "u" if matches!(size, 1 | 2 | 4 | 8) => Kind::Uint,
        "b" if size == 1 => Kind::Bool,
        _ => {
            return Err(format!(
                "only float32/float64, integers and booleans are read; {convert}"
            ));
        }
    };
    Ok(Dtype {
        kind,
        size,
        big_endian,
    })
}

/// A Python literal.
#[derive(Debug)]
enum Lit {
    Str(String),
    Int(u64),
    Bool(bool),
    None,
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

/// Nesting limit, so a hostile header cannot overflow the stack.
const MAX_DEPTH: usize = 16;

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        match self.peek() {
            Some(got) if got == c => {
                self.pos += 1;
                Ok(())
            }
            Some(got) => Err(format!(
                "expected '{}' at byte {}, found '{}'",
                c as char, self.pos, got as char
            )),
            None => Err(format!("expected '{}' but the header ended", c as char)),
        }
    }

    fn value(&mut self) -> Result<Lit, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let v = match self.peek() {
            None => Err("the header ended where a value was expected".into()),
            Some(b'{') => self.dict(),
            Some(b'(') => self.seq(b')').map(Lit::Tuple),
            Some(b'[') => self.seq(b']').map(Lit::List),
            Some(q @ (b'\'' | b'"')) => self.string(q),
            Some(b'0'..=b'9') => self.int(),
            Some(b'-') => Err(format!("negative number at byte {}", self.pos)),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(c) => Err(format!(
                "unexpected character {:?} at byte {}",
                c as char, self.pos
            )),
        };
        self.depth -= 1;
        v
    }

    fn dict(&mut self) -> Result<Lit, String> {
        self.expect(b'{')?;
        let mut entries = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Lit::Dict(entries));
            }
            let key = self.value()?;
            self.expect(b':')?;
            let val = self.value()?;
            entries.push((key, val));
            if self.peek() == Some(b',') {
                self.pos += 1;
            } else {
                self.expect(b'}')?;
                return Ok(Lit::Dict(entries));
            }
        }
    }

    /// Items up to `close`, with an optional trailing comma (the opener is consumed here).
    fn seq(&mut self, close: u8) -> Result<Vec<Lit>, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(items);
            }
            items.push(self.value()?);
            if self.peek() == Some(b',') {
                self.pos += 1;
            } else {
                self.expect(close)?;
                return Ok(items);
            }
        }
    }

    fn string(&mut self, quote: u8) -> Result<Lit, String> {
        let start = self.pos + 1;
        let mut i = start;
        while i < self.s.len() && self.s[i] != quote {
            if self.s[i] == b'\\' || self.s[i] == b'\n' {
                return Err(format!("unsupported character in a string at byte {i}"));
            }
            i += 1;
        }
        if i == self.s.len() {
            return Err("unterminated string".into());
        }
        self.pos = i + 1;
        Ok(Lit::Str(
            String::from_utf8_lossy(&self.s[start..i]).into_owned(),
        ))
    }

    fn int(&mut self) -> Result<Lit, String> {
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.pos]).expect("ASCII digits");
        // Python 2 wrote long integers with an `L` suffix.
        if matches!(self.s.get(self.pos), Some(b'L' | b'l')) {
            self.pos += 1;
        }
        digits
            .parse::<u64>()
            .map(Lit::Int)
            .map_err(|_| format!("integer {digits} does not fit in 64 bits"))
    }

    fn word(&mut self) -> Result<Lit, String> {
        let start = self.pos;
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_alphanumeric() {
            self.pos += 1;
        }
        match &self.s[start..self.pos] {
            b"True" => Ok(Lit::Bool(true)),
            b"False" => Ok(Lit::Bool(false)),
            b"None" => Ok(Lit::None),
            w => Err(format!(
                "unknown name {:?} at byte {start}",
                String::from_utf8_lossy(w)
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numpy_headers() {
        let h = parse_header(b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }   \n")
            .unwrap();
        assert_eq!(h.descr, "<f8");
        assert_eq!(
            h.dtype,
            Ok(Dtype {
                kind: Kind::F64,
                size: 8,
                big_endian: false
            })
        );
        assert!(!h.fortran_order);
        assert_eq!(h.shape, vec![3, 4]);
        let h = parse_header(b"{\"shape\": (7L,), \"fortran_order\": True, \"descr\": \">i4\"}")
            .unwrap();
        assert_eq!(h.shape, vec![7]);
        assert!(h.fortran_order);
        assert_eq!(
            h.dtype,
            Ok(Dtype {
                kind: Kind::Int,
                size: 4,
                big_endian: true
            })
        );
        let h = parse_header(b"{'descr': '|u1', 'fortran_order': False, 'shape': ()}").unwrap();
        assert!(h.shape.is_empty());
        assert_eq!(h.dtype.unwrap().kind, Kind::Uint);
    }

    #[test]
    fn rejects_bad_headers() {
        let cases: [(&[u8], &str); 9] = [
            (
                b"{'descr': '<f8', 'shape': (3, 4)}",
                "missing key 'fortran_order'",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)",
                "ended",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': Maybe, 'shape': (3, 4)}",
                "unknown name",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': 0, 'shape': (3, 4)}",
                "not True or False",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (-3, 4)}",
                "negative",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 'a')}",
                "non-negative integers",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999, 4)}",
                "64 bits",
            ),
            (
                b"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)} junk",
                "after the dict",
            ),
            (
                b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
                "nested too deeply",
            ),
        ];
        for (text, want) in cases {
            let err = parse_header(text).unwrap_err();
            assert!(err.contains(want), "{err:?} lacks {want:?}");
        }
    }

    #[test]
    fn dtypes() {
        assert!(parse_dtype("|O").unwrap_err().contains("Python objects"));
        assert!(parse_dtype("<f2").unwrap_err().contains("float32/float64"));
        assert!(parse_dtype("<c16").unwrap_err().contains("float32/float64"));
        assert!(parse_dtype("<U5").unwrap_err().contains("float32/float64"));
        assert!(
            parse_dtype("<M8[ns]")
                .unwrap_err()
                .contains("not a numeric type")
        );
        assert_eq!(parse_dtype("|b1").unwrap().kind, Kind::Bool);
        assert!(parse_dtype(">f4").unwrap().big_endian);
        assert_eq!(parse_dtype("<i8").unwrap().size, 8);
        let h = parse_header(
            b"{'descr': [('a', '<f8'), ('b', '<i4')], 'fortran_order': False, 'shape': (3,)}",
        )
        .unwrap();
        assert!(h.dtype.unwrap_err().contains("structured"));
    }

    /// Issue 10: a `descr` whose kind character is not ASCII panicked on a char boundary.
    #[test]
    fn non_ascii_dtypes_are_refused_not_a_panic() {
        for descr in ["<é8", "é8", "<€", "|\u{1F600}4", "é", ">ﬀ8"] {
            let err = parse_dtype(descr).unwrap_err();
            assert!(err.contains("convert it first"), "{descr}: {err}");
        }
        let h =
            parse_header("{'descr': '<é8', 'fortran_order': False, 'shape': (1, 1)}".as_bytes())
                .unwrap();
        assert_eq!(h.descr, "<é8");
        assert!(h.dtype.is_err());
        // Bytes that are not UTF-8 at all.
        let h =
            parse_header(b"{'descr': '<\xff8', 'fortran_order': False, 'shape': (1, 1)}").unwrap();
        assert!(h.dtype.is_err());
    }
}
