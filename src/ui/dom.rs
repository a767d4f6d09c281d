//! The few DOM helpers the page builds its elements and timers with (plain web-sys).

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

use super::rx::Memo;

thread_local! {
    static WINDOW: web_sys::Window = web_sys::window().expect("the page runs in a window");
    static DOCUMENT: web_sys::Document = window().document().expect("the window has a document");
}

/// The browser window.
pub fn window() -> web_sys::Window {
    WINDOW.with(Clone::clone)
}

/// The page's document.
pub fn document() -> web_sys::Document {
    DOCUMENT.with(Clone::clone)
}

/// Runs `f` once, after `delay` (a new task even at zero).
pub fn set_timeout(f: impl FnOnce() + 'static, delay: std::time::Duration) {
    let f: Box<dyn FnOnce()> = Box::new(f);
    let cb = Closure::once_into_js(f);
    let ms = i32::try_from(delay.as_millis()).unwrap_or(i32::MAX);
    let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), ms);
}

/// Runs `f` once, before the next repaint.
pub fn request_animation_frame(f: impl FnOnce() + 'static) {
    let f: Box<dyn FnOnce()> = Box::new(f);
    let cb = Closure::once_into_js(f);
    let _ = window().request_animation_frame(cb.unchecked_ref());
}

/// A new element with these attributes. A `createElement` the browser refuses leaves no page
/// to build: it panics, and the panic hook (src/bin/web.rs) shows the error panel.
pub fn element(tag: &str, attrs: &[(&str, &str)]) -> web_sys::Element {
    let el = document()
        .create_element(tag)
        .unwrap_or_else(|e| panic!("createElement({tag}) failed: {e:?}"));
    for (name, value) in attrs {
        let _ = el.set_attribute(name, value);
    }
    el
}

/// Appends `child` to `parent`.
pub fn append(parent: &web_sys::Node, child: &web_sys::Node) {
    let _ = parent.append_child(child);
}

/// Listens to `event` on `target` for the page's lifetime.
pub fn listen(target: &web_sys::EventTarget, event: &str, f: impl Fn(web_sys::Event) + 'static) {
    let f: Box<dyn Fn(web_sys::Event)> = Box::new(f);
    let cb = Closure::<dyn Fn(web_sys::Event)>::new(f);
    let _ = target.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
    cb.forget();
}

/// A text node under `parent` that shows `text` and follows it.
pub fn text_node(parent: &web_sys::Node, text: Memo<String>) {
    let node = document().create_text_node("");
    append(parent, &node);
    super::effect(move || text.with(|t| node.set_data(t)));
}

/// Sets an attribute of `el` to `value` and keeps it there as the memo changes.
pub fn bind_attr(el: &web_sys::Element, name: &'static str, value: Memo<String>) {
    let el = el.clone();
    super::effect(move || {
        value.with(|v| {
            let _ = el.set_attribute(name, v);
        })
    });
}

/// Sets an element's markup to `html` and keeps it there as the memo changes.
pub fn bind_inner_html(el: &web_sys::Element, html: Memo<String>) {
    let el = el.clone();
    super::effect(move || html.with(|h| el.set_inner_html(h)));
}
