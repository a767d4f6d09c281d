//! The browser entry point: installs a panic hook that replaces the page with an error panel
//! (instead of leaving a dead page), then mounts the Leptos app.

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_panic_panel(&info.to_string());
    }));
    mark("main");
    headroom::ui::mount();
    mark("mounted");
}

/// A performance mark, read by scripts/measure-budgets.mjs to split the first-verdict time.
fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(name);
    }
}

/// Builds the error panel with DOM calls (no HTML parsing of the message).
fn show_panic_panel(message: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(panel) = doc.create_element("div") else {
        return;
    };
    panel.set_class_name("panic-panel");
    let _ = panel.set_attribute("role", "alert");
    let _ = panel.set_attribute("data-testid", "panic-panel");
    let add = |tag: &str, text: &str| {
        if let Ok(el) = doc.create_element(tag) {
            el.set_text_content(Some(text));
            let _ = panel.append_child(&el);
            Some(el)
        } else {
            None
        }
    };
    add("h2", "Headroom hit an internal error");
    add(
        "p",
        "The page stopped working. Your inputs are in the address bar; reloading may help, or start over with the link below. Please report the message.",
    );
    add("pre", message);
    if let Some(a) = add("a", "Start over with the default scenario") {
        let _ = a.set_attribute("href", "?v=1");
    }
    if let Some(body) = doc.body() {
        let _ = body.insert_before(&panel, body.first_child().as_ref());
    }
}
