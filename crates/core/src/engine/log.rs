//! A decision log as named columns: what a policy or a power layer keeps of its calls (MARS's
//! searches, SNF-ICON's screens and spare targets), handed out in one generic form so that the
//! engine and the binding need not know any one policy's record.

/// One column of a log: a value per row.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    F32(Vec<f32>),
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
    Text(Vec<String>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::F32(v) => v.len(),
            Column::U8(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Named columns in the order they are written out. Columns of one table may differ in
/// length (a flat list of candidates beside one row per decision, joined by an offsets
/// column).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogTable {
    pub columns: Vec<(&'static str, Column)>,
}

impl LogTable {
    /// Adds a column built from a field of each record.
    pub fn add<R, T>(
        &mut self,
        name: &'static str,
        records: &[R],
        field: impl Fn(&R) -> T,
        wrap: fn(Vec<T>) -> Column,
    ) {
        self.columns
            .push((name, wrap(records.iter().map(field).collect())));
    }

    pub fn push(&mut self, name: &'static str, column: Column) {
        self.columns.push((name, column));
    }

    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.0 == name).map(|c| &c.1)
    }
}
