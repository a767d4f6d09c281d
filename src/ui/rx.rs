//! The page's reactive state: signals, memos and effects, single-threaded, in one arena.
//!
//! Handles (`RwSignal<T>`, `Memo<T>`) are `Copy` indices into a thread-local arena; their
//! methods keep Leptos's names (`get`, `with`, `set`, `update`, `track`, `get_untracked`,
//! `with_untracked`), so the page reads as it did with Leptos, which this replaced (DESIGN.md,
//! "Why is the page built the way it is?", says why: about 35 KB gzip of wasm).
//!
//! Semantics, as Leptos 0.8's:
//! - Reading a signal or memo inside a memo or an effect subscribes it (dependencies are
//!   collected again on every run, so they follow the branches taken).
//! - A memo is lazy: it recomputes when read after one of its sources changed, and its
//!   dependents hear of it only when the new value differs (`!=`) from the old one.
//! - An effect runs once after it is created and again after something it read changed. Effects
//!   are scheduled, not run inside `set`: a handler that sets several signals gets one run of each
//!   effect, in a microtask, as Leptos's effects run in a spawned task. [`flush`] runs the
//!   queue now (the first paint uses it).
//! - Glitch-free: a memo read anywhere (tracked or not) is brought up to date with every signal
//!   already set, so an effect never sees a memo stale against its sources. Marking is pushed
//!   (dirty / maybe-dirty), recomputation is pulled, as in Leptos's `reactive_graph`.
//! - An effect that sets a signal queues the effects that read it; the queue is drained in a
//!   loop, never by recursion.
//!
//! Nothing is ever disposed: the page creates its signals, memos and effects once.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::rc::Rc;

type Id = u32;

/// How current a memo or effect is: `Check` means a source of a source changed (it may have
/// to run), `Dirty` that a direct source did.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    Clean,
    Check,
    Dirty,
}

struct Node {
    /// A signal's or memo's value, a `RefCell<Option<T>>` (`None` before a memo first runs).
    value: Option<Rc<dyn Any>>,
    /// A memo's or effect's computation: runs it and says whether the value changed.
    compute: Option<Rc<dyn Fn() -> bool>>,
    effect: bool,
    state: State,
    sources: Vec<Id>,
    subscribers: Vec<Id>,
}

#[derive(Default)]
struct Runtime {
    nodes: RefCell<Vec<Node>>,
    /// The memo or effect running now, which reads subscribe to.
    observer: Cell<Option<Id>>,
    /// Effects waiting to run, in the order they were marked.
    queue: RefCell<VecDeque<Id>>,
    flushing: Cell<bool>,
    scheduled: Cell<bool>,
}

thread_local! {
    static RT: Runtime = Runtime::default();
}

fn with_nodes<R>(f: impl FnOnce(&mut Vec<Node>) -> R) -> R {
    RT.with(|rt| f(&mut rt.nodes.borrow_mut()))
}

fn create(value: Option<Rc<dyn Any>>, compute: Option<Rc<dyn Fn() -> bool>>, effect: bool) -> Id {
    let id = with_nodes(|nodes| {
        let id = nodes.len() as Id;
        nodes.push(Node {
            value,
            state: if compute.is_some() {
                State::Dirty
            } else {
                State::Clean
            },
            compute,
            effect,
            sources: Vec::new(),
            subscribers: Vec::new(),
        });
        id
    });
    if effect {
        RT.with(|rt| rt.queue.borrow_mut().push_back(id));
        schedule();
    }
    id
}

/// Raises a node's state; an effect that was clean joins the queue, a memo passes "check" on.
fn mark(id: Id, to: State) {
    let (was, effect) = with_nodes(|nodes| {
        let n = &mut nodes[id as usize];
        let was = n.state;
        if was < to {
            n.state = to;
        }
        (was, n.effect)
    });
    if was >= to {
        return;
    }
    if effect {
        if was == State::Clean {
            RT.with(|rt| rt.queue.borrow_mut().push_back(id));
        }
        return;
    }
    let mut i = 0;
    while let Some(s) = with_nodes(|nodes| nodes[id as usize].subscribers.get(i).copied()) {
        mark(s, State::Check);
        i += 1;
    }
}

/// Brings a memo or effect up to date: a `Check` asks its sources first, and runs only if one
/// of them changed.
fn update(id: Id) {
    let state = with_nodes(|nodes| nodes[id as usize].state);
    if state == State::Check {
        let mut i = 0;
        while let Some(s) = with_nodes(|nodes| {
            let n = &nodes[id as usize];
            (n.state == State::Check)
                .then(|| n.sources.get(i).copied())
                .flatten()
        }) {
            update(s);
            i += 1;
        }
        with_nodes(|nodes| {
            let n = &mut nodes[id as usize];
            if n.state == State::Check {
                n.state = State::Clean;
            }
        });
    }
    if with_nodes(|nodes| nodes[id as usize].state) == State::Dirty {
        run(id);
    }
}

/// Runs a memo or effect, collecting its sources again; a memo whose value changed makes its
/// subscribers dirty.
fn run(id: Id) {
    let (compute, old) = with_nodes(|nodes| {
        let n = &mut nodes[id as usize];
        // Clean before it runs: a source set while it runs marks it again.
        n.state = State::Clean;
        (n.compute.clone(), std::mem::take(&mut n.sources))
    });
    with_nodes(|nodes| {
        for s in old {
            nodes[s as usize].subscribers.retain(|x| *x != id);
        }
    });
    let Some(compute) = compute else { return };
    let prev = RT.with(|rt| rt.observer.replace(Some(id)));
    let changed = compute();
    RT.with(|rt| rt.observer.set(prev));
    if changed {
        let mut i = 0;
        while let Some(s) = with_nodes(|nodes| nodes[id as usize].subscribers.get(i).copied()) {
            mark(s, State::Dirty);
            i += 1;
        }
    }
}

/// A read: brings a memo up to date, subscribes the running memo or effect (unless
/// `untracked`), and hands out the value's cell.
fn read(id: Id, tracked: bool) -> Rc<dyn Any> {
    update(id);
    let observer = RT.with(|rt| rt.observer.get()).filter(|_| tracked);
    with_nodes(|nodes| {
        if let Some(o) = observer {
            if o != id && !nodes[o as usize].sources.contains(&id) {
                nodes[o as usize].sources.push(id);
                nodes[id as usize].subscribers.push(o);
            }
        }
        nodes[id as usize]
            .value
            .clone()
            .expect("a signal or memo has a value cell")
    })
}

/// A signal was written: everything that read it is dirty, and the effects are scheduled.
fn notify(id: Id) {
    let mut i = 0;
    while let Some(s) = with_nodes(|nodes| nodes[id as usize].subscribers.get(i).copied()) {
        mark(s, State::Dirty);
        i += 1;
    }
    schedule();
}

/// Runs the queued effects now (and those they queue), in order. A call while effects are
/// running returns at once: the running loop takes the new ones.
pub fn flush() {
    let busy = RT.with(|rt| rt.flushing.replace(true));
    if busy {
        return;
    }
    while let Some(id) = RT.with(|rt| rt.queue.borrow_mut().pop_front()) {
        update(id);
    }
    RT.with(|rt| {
        rt.flushing.set(false);
        rt.scheduled.set(false);
    });
}

/// Asks for a [`flush`] in a microtask (in the browser; tests call `flush` themselves).
fn schedule() {
    let idle = RT.with(|rt| {
        !rt.flushing.get() && !rt.queue.borrow().is_empty() && !rt.scheduled.replace(true)
    });
    if idle {
        queue_flush();
    }
}

#[cfg(target_arch = "wasm32")]
fn queue_flush() {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    thread_local! {
        static FLUSH: Closure<dyn Fn()> = Closure::new(flush);
    }
    FLUSH.with(|f| super::dom::window().queue_microtask(f.as_ref().unchecked_ref()));
}

#[cfg(not(target_arch = "wasm32"))]
fn queue_flush() {}

/// The typed value cell behind a handle.
fn cell<T: 'static>(any: &dyn Any) -> &RefCell<Option<T>> {
    any.downcast_ref()
        .expect("a handle's value cell has the handle's type")
}

/// A handle's value, borrowed for `f`.
fn with_value<T: 'static, R>(id: Id, tracked: bool, f: impl FnOnce(&T) -> R) -> R {
    let any = read(id, tracked);
    let value = cell::<T>(&*any).borrow();
    f(value.as_ref().expect("a signal or memo read has a value"))
}

/// A readable and writable value. Writing notifies its readers, always (as Leptos's does):
/// callers that must not notify compare first.
pub struct RwSignal<T> {
    id: Id,
    ty: PhantomData<fn() -> T>,
}

impl<T> Clone for RwSignal<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for RwSignal<T> {}

impl<T: 'static> RwSignal<T> {
    pub fn new(value: T) -> Self {
        let cell: Rc<dyn Any> = Rc::new(RefCell::new(Some(value)));
        RwSignal {
            id: create(Some(cell), None, false),
            ty: PhantomData,
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        with_value(self.id, true, f)
    }

    pub fn with_untracked<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        with_value(self.id, false, f)
    }

    pub fn get(&self) -> T
    where
        T: Clone,
    {
        self.with(T::clone)
    }

    pub fn get_untracked(&self) -> T
    where
        T: Clone,
    {
        self.with_untracked(T::clone)
    }

    /// Subscribes the running memo or effect without reading the value.
    pub fn track(&self) {
        read(self.id, true);
    }

    pub fn set(&self, value: T) {
        self.update(|v| *v = value);
    }

    pub fn update(&self, f: impl FnOnce(&mut T)) {
        {
            let any = read(self.id, false);
            let mut value = cell::<T>(&*any).borrow_mut();
            if let Some(v) = value.as_mut() {
                f(v);
            }
        }
        notify(self.id);
    }
}

/// A memo's computation, from its previous value.
type MemoFn<T> = Box<dyn Fn(Option<&T>) -> T>;

/// A derived value, recomputed lazily from what it reads. `f` gets the previous value (none
/// the first time); readers hear of a new value only when it differs from the old one.
pub struct Memo<T> {
    id: Id,
    ty: PhantomData<fn() -> T>,
}

impl<T> Clone for Memo<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Memo<T> {}

impl<T: PartialEq + 'static> Memo<T> {
    pub fn new(f: impl Fn(Option<&T>) -> T + 'static) -> Self {
        // Boxed: every memo of one type shares one instantiation of the code below.
        Self::boxed(Box::new(f))
    }

    fn boxed(f: MemoFn<T>) -> Self {
        let value: Rc<RefCell<Option<T>>> = Rc::new(RefCell::new(None));
        let slot = value.clone();
        let compute = move || {
            let next = f(slot.borrow().as_ref());
            let mut now = slot.borrow_mut();
            if now.as_ref() == Some(&next) {
                return false;
            }
            *now = Some(next);
            true
        };
        Memo {
            id: create(Some(value), Some(Rc::new(compute)), false),
            ty: PhantomData,
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        with_value(self.id, true, f)
    }

    pub fn with_untracked<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        with_value(self.id, false, f)
    }

    pub fn get(&self) -> T
    where
        T: Clone,
    {
        self.with(T::clone)
    }

    pub fn get_untracked(&self) -> T
    where
        T: Clone,
    {
        self.with_untracked(T::clone)
    }

    /// Subscribes the running memo or effect (bringing the memo up to date) without reading it.
    pub fn track(&self) {
        read(self.id, true);
    }
}

/// An effect: runs `f` at the next [`flush`], then again after anything it read changed.
pub fn effect(f: Box<dyn Fn()>) {
    create(
        None,
        Some(Rc::new(move || {
            f();
            false
        })),
        true,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter of runs.
    fn counter() -> Rc<Cell<u32>> {
        Rc::new(Cell::new(0))
    }

    #[test]
    fn an_effect_runs_once_at_the_flush_then_after_each_change() {
        let s = RwSignal::new(1);
        let seen = Rc::new(RefCell::new(Vec::new()));
        let log = seen.clone();
        effect(Box::new(move || log.borrow_mut().push(s.get())));
        assert!(seen.borrow().is_empty(), "scheduled, not run inside new");
        flush();
        assert_eq!(*seen.borrow(), [1]);
        // Several writes before the flush: one run, with the last value.
        s.set(2);
        s.set(3);
        flush();
        assert_eq!(*seen.borrow(), [1, 3]);
        flush();
        assert_eq!(*seen.borrow(), [1, 3], "nothing changed, no run");
        // `set` notifies even with an equal value, as Leptos's does.
        s.set(3);
        flush();
        assert_eq!(*seen.borrow(), [1, 3, 3]);
    }

    #[test]
    fn a_memo_notifies_only_when_its_value_differs() {
        let s = RwSignal::new(4);
        let computed = counter();
        let c = computed.clone();
        let parity = Memo::new(move |_| {
            c.set(c.get() + 1);
            s.get() % 2
        });
        let runs = counter();
        let r = runs.clone();
        effect(Box::new(move || {
            parity.track();
            r.set(r.get() + 1);
        }));
        flush();
        assert_eq!((computed.get(), runs.get()), (1, 1));
        s.set(6);
        flush();
        assert_eq!(
            (computed.get(), runs.get()),
            (2, 1),
            "same parity, effect skipped"
        );
        s.set(7);
        flush();
        assert_eq!((computed.get(), runs.get()), (3, 2));
        assert_eq!(parity.get_untracked(), 1);
    }

    #[test]
    fn a_memo_is_lazy_and_gets_its_previous_value() {
        let s = RwSignal::new(1);
        let computed = counter();
        let c = computed.clone();
        // The largest value seen: the previous value carries state across runs.
        let max = Memo::new(move |prev: Option<&i32>| {
            c.set(c.get() + 1);
            let v = s.get();
            prev.map_or(v, |p| v.max(*p))
        });
        assert_eq!(computed.get(), 0, "not computed until read");
        assert_eq!(max.get_untracked(), 1);
        s.set(5);
        s.set(2);
        assert_eq!(computed.get(), 1, "not recomputed until read");
        // Lazy: the 5 in between was never seen.
        assert_eq!(max.get_untracked(), 2);
        assert_eq!(computed.get(), 2);
        s.set(7);
        assert_eq!(max.get_untracked(), 7);
        s.set(3);
        assert_eq!(max.get_untracked(), 7, "the previous value carried over");
        assert_eq!(max.get_untracked(), 7);
        assert_eq!(computed.get(), 4, "read twice, computed once");
    }

    #[test]
    fn an_effect_never_sees_a_memo_behind_a_signal_it_reads() {
        // A diamond: the effect reads the signal and two memos on it; every run sees them agree.
        let s = RwSignal::new(1);
        let double = Memo::new(move |_| s.get() * 2);
        let quad = Memo::new(move |_| double.get() * 2);
        let seen = Rc::new(RefCell::new(Vec::new()));
        let log = seen.clone();
        effect(Box::new(move || {
            log.borrow_mut().push((quad.get(), s.get(), double.get()))
        }));
        flush();
        for v in 2..6 {
            s.set(v);
            flush();
        }
        let seen = seen.borrow();
        assert_eq!(
            seen.len(),
            5,
            "one run per change, no glitch runs: {seen:?}"
        );
        assert!(
            seen.iter().all(|(q, s, d)| *q == 4 * s && *d == 2 * s),
            "{seen:?}"
        );
        // An untracked read outside any effect is current too.
        s.set(10);
        assert_eq!(quad.get_untracked(), 40);
    }

    #[test]
    fn dependencies_follow_the_branch_taken() {
        let which = RwSignal::new(true);
        let a = RwSignal::new("a");
        let b = RwSignal::new("b");
        let runs = counter();
        let r = runs.clone();
        let seen = Rc::new(RefCell::new(String::new()));
        let out = seen.clone();
        effect(Box::new(move || {
            r.set(r.get() + 1);
            *out.borrow_mut() = if which.get() { a.get() } else { b.get() }.to_string();
        }));
        flush();
        b.set("B");
        flush();
        assert_eq!(
            (runs.get(), seen.borrow().as_str()),
            (1, "a"),
            "b not read yet"
        );
        which.set(false);
        flush();
        assert_eq!((runs.get(), seen.borrow().as_str()), (2, "B"));
        a.set("A");
        flush();
        assert_eq!(runs.get(), 2, "a no longer read");
        // Untracked reads do not subscribe.
        let u = RwSignal::new(0);
        let r = runs.clone();
        effect(Box::new(move || {
            u.get_untracked();
            r.set(r.get() + 1);
        }));
        flush();
        u.set(1);
        flush();
        assert_eq!(runs.get(), 3);
    }

    #[test]
    fn effects_that_set_signals_are_queued_not_recursed() {
        let n = RwSignal::new(0u32);
        let echo = RwSignal::new(0u32);
        let order = Rc::new(RefCell::new(Vec::new()));
        let o = order.clone();
        // Counts itself up to 1,000 by writing what it reads: a loop of queued runs, which
        // would be 1,000 nested calls if effects ran inside `set`.
        effect(Box::new(move || {
            let v = n.get();
            o.borrow_mut().push(("count", v));
            if v < 1_000 {
                n.set(v + 1);
            }
        }));
        let o = order.clone();
        effect(Box::new(move || {
            let v = n.get();
            echo.set(v);
            o.borrow_mut().push(("echo", v));
        }));
        flush();
        assert_eq!(n.get_untracked(), 1_000);
        assert_eq!(echo.get_untracked(), 1_000);
        let order = order.borrow();
        assert_eq!(order.first(), Some(&("count", 0)), "creation order first");
        assert_eq!(order.get(1), Some(&("echo", 1)), "then the other, current");
        let counts: Vec<u32> = order
            .iter()
            .filter(|(k, _)| *k == "count")
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(counts, (0..=1_000).collect::<Vec<u32>>());
        let echoes = order.iter().filter(|(k, _)| *k == "echo").count();
        assert_eq!(echoes, 1_000, "once per value from 1 on");
    }

    #[test]
    fn update_and_with_work_in_place() {
        let list = RwSignal::new(vec![1, 2]);
        let len = Memo::new(move |_| list.with(Vec::len));
        list.update(|l| l.push(3));
        assert_eq!(len.get_untracked(), 3);
        assert_eq!(list.with_untracked(|l| l.iter().sum::<i32>()), 6);
        let shared = Memo::new(move |_| list.get().into_iter().map(|x| x * 10).collect::<Vec<_>>());
        assert_eq!(shared.with_untracked(|v| v.clone()), [10, 20, 30]);
    }
}
