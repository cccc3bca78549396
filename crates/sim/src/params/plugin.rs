//! The one shape of every extension point: queue disciplines (`queue::DISCIPLINES`),
//! congestion controls (`cc::CONTROLLERS`), ACK rewriters (`gateway::REWRITERS`) and
//! receive-window policies (`tcp::rwnd::POLICIES`).
//!
//! A plug-in is an [`Entry`] declared in its own file: the name a scenario gives, one doc
//! line, the keys of its parameter table, and a parse function that reads those keys into its
//! validated parameters — a plain value (`Clone + Debug + PartialEq`) that implements the
//! extension point's builder trait, which makes the runtime object. The extension point lists
//! its entries once; a scenario's choice is a [`Spec`]: the entry and the parsed parameters.

use super::{Res, Table};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// One plug-in of an extension point. `B` is the point's builder trait (`dyn QueueBuild`),
/// `Cx` what its parse may read besides its own keys, `X` what else the point records of
/// each entry.
pub struct Entry<B: ?Sized + 'static, Cx: 'static = (), X: 'static = ()> {
    /// What scenarios call it.
    pub name: &'static str,
    /// One line for docs and listings.
    pub doc: &'static str,
    /// The keys of its parameter table (the caller rejects any other key after `parse`).
    pub keys: &'static [&'static str],
    /// The extension point's own facts about it (e.g. a queue's default limit).
    pub extra: X,
    /// Reads its keys into validated parameters (range errors name the key path).
    pub parse: fn(&mut Table, &Cx) -> Res<Arc<B>>,
}

impl<B: ?Sized, Cx, X> fmt::Debug for Entry<B, Cx, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entry({})", self.name)
    }
}

/// The entry of `list` called `name`.
pub fn lookup<'a, B: ?Sized, Cx, X>(
    list: &'a [Entry<B, Cx, X>],
    name: &str,
) -> Option<&'a Entry<B, Cx, X>> {
    list.iter().find(|e| e.name == name)
}

/// What every parameter value is: printable, shareable, and comparable with another plug-in's
/// (equal when of the same type and `==`). Implemented for every `Debug + PartialEq` type.
pub trait Params: fmt::Debug + Send + Sync + 'static {
    fn as_any(&self) -> &dyn Any;
    /// `self == other` when `other` has `self`'s type; false otherwise.
    fn same(&self, other: &dyn Params) -> bool;
}

impl<T: fmt::Debug + PartialEq + Send + Sync + 'static> Params for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn same(&self, other: &dyn Params) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

/// A scenario's choice at one extension point: the entry and its parsed parameters.
pub struct Spec<B: ?Sized + 'static, Cx: 'static = (), X: 'static = ()> {
    pub entry: &'static Entry<B, Cx, X>,
    pub params: Arc<B>,
}

impl<B: ?Sized, Cx, X> Spec<B, Cx, X> {
    pub fn new(entry: &'static Entry<B, Cx, X>, params: Arc<B>) -> Self {
        Spec { entry, params }
    }
    pub fn name(&self) -> &'static str {
        self.entry.name
    }
    pub fn params(&self) -> &B {
        &self.params
    }
}

impl<B: ?Sized, Cx, X> Clone for Spec<B, Cx, X> {
    fn clone(&self) -> Self {
        Spec { entry: self.entry, params: self.params.clone() }
    }
}

impl<B: ?Sized + fmt::Debug, Cx, X> fmt::Debug for Spec<B, Cx, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}", self.entry.name, self.params)
    }
}

impl<B: ?Sized + AsParams, Cx, X> PartialEq for Spec<B, Cx, X> {
    fn eq(&self, o: &Self) -> bool {
        std::ptr::eq(self.entry, o.entry) && self.params.as_params().same(o.params.as_params())
    }
}

/// A builder trait object seen as its parameter value (every builder trait has [`Params`] as
/// a supertrait; this names the upcast for generic code).
pub trait AsParams {
    fn as_params(&self) -> &dyn Params;
}

/// Implements [`AsParams`] for an extension point's builder trait object.
#[macro_export]
macro_rules! as_params {
    ($t:ty) => {
        impl $crate::params::plugin::AsParams for $t {
            fn as_params(&self) -> &dyn $crate::params::plugin::Params {
                self
            }
        }
    };
}

/// Fails on a name listed twice or a key listed twice by one entry (each extension point's
/// tests call it).
pub fn check_list<B: ?Sized, Cx, X>(list: &[Entry<B, Cx, X>], reserved: &[&str]) {
    for (i, e) in list.iter().enumerate() {
        assert!(list[i + 1..].iter().all(|o| o.name != e.name), "{} twice", e.name);
        assert!(!e.doc.is_empty(), "{}: no doc line", e.name);
        for (j, k) in e.keys.iter().enumerate() {
            assert!(!e.keys[j + 1..].contains(k), "{}: key {k} twice", e.name);
            assert!(!reserved.contains(k), "{}: key {k} is the extension point's own", e.name);
        }
    }
}
