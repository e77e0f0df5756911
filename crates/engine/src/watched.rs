//! What of a server a run must not change, found before it starts and carried by its
//! context to the script guard. Its own module, below both the worker loop and the
//! workloads, because the run context (`exec`) carries it and the guard (`workload`) reads it.

/// What a script's guard watches in a database that holds tables sizeup did not make:
/// those tables, and what else decides how the server reads a statement there
/// ([`foreign_tables`](crate::workload::ownership::foreign_tables) finds it; a run's context carries it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Watched {
    /// The tables sizeup did not make.
    pub tables: Vec<String>,
    /// The server's stored and loadable functions (lower-case), each with what it is: a
    /// call runs statements sizeup cannot read.
    pub(crate) functions: Vec<(String, &'static str)>,
    /// Its stored packages (MariaDB), lower-case: `pkg.f()` calls a function of one.
    pub(crate) packages: Vec<String>,
    /// The client character set `SET NAMES DEFAULT` gives (the server's global one),
    /// where sizeup cannot read statements in it.
    pub(crate) default_charset: Option<String>,
}

impl Watched {
    /// No table to guard: the guard has nothing to do.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Adds what another server of the run watches (round robin): each table and
    /// function once.
    pub fn merge(&mut self, other: Watched) {
        fn add_new<T: PartialEq>(to: &mut Vec<T>, from: Vec<T>) {
            for x in from {
                if !to.contains(&x) {
                    to.push(x);
                }
            }
        }
        add_new(&mut self.tables, other.tables);
        add_new(&mut self.functions, other.functions);
        add_new(&mut self.packages, other.packages);
        self.default_charset = self.default_charset.take().or(other.default_charset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round robin: each server's watched facts, once each.
    #[test]
    fn watched_facts_of_several_servers_merge_once() {
        let mut a = Watched::from_list(vec!["t1".into(), "\0Ff1".into()]);
        a.merge(Watched::from_list(vec!["t1".into(), "t2".into(), "\0Ff1".into(), "\0Pp".into(), "\0Dgbk".into()]));
        assert_eq!(
            a,
            Watched::from_list(vec!["t1".into(), "\0Ff1".into(), "t2".into(), "\0Pp".into(), "\0Dgbk".into()])
        );
    }

    impl Watched {
        /// Tables, then tagged entries: `\0F` a stored function, `\0L` a loadable one,
        /// `\0P` a package, `\0D` the default character set.
        pub(crate) fn from_list(list: Vec<String>) -> Watched {
            let mut w = Watched::default();
            for entry in list {
                let tagged = |tag: &str| entry.strip_prefix(tag).map(str::to_lowercase);
                if let Some(name) = tagged("\0F") {
                    w.functions.push((name, "a stored function"));
                } else if let Some(name) = tagged("\0L") {
                    w.functions.push((name, "a loadable function"));
                } else if let Some(name) = tagged("\0P") {
                    w.packages.push(name);
                } else if let Some(charset) = tagged("\0D") {
                    w.default_charset = Some(charset);
                } else {
                    w.tables.push(entry);
                }
            }
            w
        }
    }
}
