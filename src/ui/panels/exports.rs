//! Exports (issue 19, item 11): each chart as SVG and PNG, the plan as JSON in the CLI's schema
//! (`headroom plan --json`), beside the ledger's Markdown. Everything is made in the page: a
//! chart's SVG is the one on screen with its focus overlay taken out and a white ground put
//! in; its PNG is that SVG drawn on a canvas at twice its size; the JSON is
//! `cli::json::document` of the scenario and plan the page shows.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::super::charts;
use super::super::state::AppState;

/// The legend of the per-rank chart: every segment and mark, each listed by CSS only where a
/// bar draws a shape with its `data-term` (public/page.css).
pub(super) fn legend_html() -> String {
    let mut h = String::new();
    for (color, name, term) in charts::legend() {
        // The free space is hatched on the chart, and so is its swatch.
        let swatch = if term == "free" {
            format!(
                r#"<rect width="10" height="10" fill="none" stroke="{color}"></rect><path d="M0 10L10 0M0 5L5 0M5 10L10 5" stroke="{color}"></path>"#
            )
        } else {
            format!(r#"<rect width="10" height="10" fill="{color}"></rect>"#)
        };
        h.push_str(&format!(
            r#"<li data-term="{term}"><svg class="swatch" viewBox="0 0 10 10" aria-hidden="true">{swatch}</svg>{name}</li>"#
        ));
    }
    h
}

/// The download buttons under a chart: `name` is the file's stem (`headroom-rank-chart`).
pub(super) fn chart_buttons(name: &str, what: &str) -> String {
    format!(
        r#"<span class="exports" role="group" aria-label="Download the {what}">Download: <button type="button" data-export="svg" data-name="{name}" data-testid="{name}-svg">SVG</button> <button type="button" data-export="png" data-name="{name}" data-testid="{name}-png">PNG</button></span>"#
    )
}

/// A chart's SVG as a file: the overlay of focusable shapes out (they draw nothing), a white
/// ground and the font in, the theme's sentinel colour as black.
pub fn standalone_svg(svg: &str) -> String {
    let mut out = svg.to_string();
    if let (Some(a), Some(b)) = (out.find(r#"<g class="overlay">"#), out.rfind("</svg>")) {
        if a < b {
            out.replace_range(a..b, "");
        }
    }
    if let Some(i) = out
        .find("<svg")
        .and_then(|i| out[i..].find('>').map(|j| i + j + 1))
    {
        out.insert_str(
            i,
            r##"<style>text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}</style><rect width="100%" height="100%" fill="#ffffff"></rect>"##,
        );
    }
    if !out.contains("xmlns=") {
        out = out.replacen("<svg", r#"<svg xmlns="http://www.w3.org/2000/svg""#, 1);
    }
    out
}

/// Saves `bytes` of `mime` type as a file named `file` (an anchor's download of a blob URL).
fn download(file: &str, mime: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let result = save_url(file, &url);
    web_sys::Url::revoke_object_url(&url)?;
    result
}

fn save_url(file: &str, url: &str) -> Result<(), JsValue> {
    let doc = document();
    let a: web_sys::HtmlAnchorElement = doc.create_element("a")?.dyn_into()?;
    a.set_href(url);
    a.set_download(file);
    a.click();
    Ok(())
}

/// Draws the SVG on a canvas at twice its size and saves it as PNG (the image loads from a
/// data URL, which the page's policy allows for images).
fn download_png(file: String, svg: &str) -> Result<(), JsValue> {
    let (w, h) = view_box(svg).unwrap_or((f64::from(charts::CHART_W), 340.0));
    let img = web_sys::HtmlImageElement::new()?;
    let src = format!(
        "data:image/svg+xml;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(svg))
    );
    let loaded = img.clone();
    let onload = Closure::once(move || -> Result<(), JsValue> {
        let canvas: web_sys::HtmlCanvasElement = document().create_element("canvas")?.dyn_into()?;
        canvas.set_width((w * 2.0) as u32);
        canvas.set_height((h * 2.0) as u32);
        let ctx: web_sys::CanvasRenderingContext2d = canvas
            .get_context("2d")?
            .ok_or_else(|| JsValue::from_str("no 2d context"))?
            .dyn_into()?;
        ctx.scale(2.0, 2.0)?;
        ctx.draw_image_with_html_image_element_and_dw_and_dh(&loaded, 0.0, 0.0, w, h)?;
        save_url(&file, &canvas.to_data_url_with_type("image/png")?)
    });
    img.set_onload(Some(onload.as_ref().unchecked_ref()));
    // Alive until the image loads; one per click.
    onload.forget();
    img.set_src(&src);
    Ok(())
}

/// The width and height of an SVG's viewBox.
fn view_box(svg: &str) -> Option<(f64, f64)> {
    let rest = &svg[svg.find(r#"viewBox=""#)? + 9..];
    let mut it = rest[..rest.find('"')?]
        .split_whitespace()
        .filter_map(crate::calc::decimal::parse_f64);
    let (_, _, w, h) = (it.next()?, it.next()?, it.next()?, it.next()?);
    Some((w, h))
}

/// Handles a click on an export button; `true` when it was one.
pub(super) fn on_click(ev: &web_sys::Event, app: AppState, status: RwSignal<String>) -> bool {
    if super::super::closest(ev, "[data-testid=download-json]").is_some() {
        let doc = app.scenario.with_untracked(|s| {
            let s = s.as_ref().ok()?;
            app.later.with_untracked(|p| {
                p.as_deref()
                    .map(|p| crate::cli::json::document(s, p).to_string())
            })
        });
        match doc {
            Some(text) => report(
                download("headroom-plan.json", "application/json", &text),
                "Saved headroom-plan.json.",
                status,
            ),
            None => status.set("No plan to save: these inputs give none (see the verdict).".into()),
        }
        return true;
    }
    let Some(button) = super::super::closest(ev, "[data-export]") else {
        return false;
    };
    let kind = button.get_attribute("data-export").unwrap_or_default();
    let name = button
        .get_attribute("data-name")
        .unwrap_or_else(|| "headroom-chart".into());
    let svg = button
        .closest("figure")
        .ok()
        .flatten()
        .and_then(|f| f.query_selector(".svg svg").ok().flatten())
        .map(|e| standalone_svg(&e.outer_html()));
    let Some(svg) = svg else {
        status.set("This chart has nothing drawn to save.".into());
        return true;
    };
    let done = if kind == "png" {
        download_png(format!("{name}.png"), &svg)
    } else {
        download(&format!("{name}.svg"), "image/svg+xml", &svg)
    };
    report(done, "", status);
    true
}

fn report(r: Result<(), JsValue>, ok: &str, status: RwSignal<String>) {
    match r {
        Ok(()) => status.set(ok.into()),
        Err(_) => status.set("The browser refused the download.".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standalone_svg_has_a_ground_and_no_overlay() {
        let svg = r#"<svg width="720" height="340" viewBox="0 0 720 340" xmlns="http://www.w3.org/2000/svg"><rect/><g class="overlay"><rect class="hit"/></g></svg>"#;
        let out = standalone_svg(svg);
        assert!(!out.contains("overlay") && !out.contains("hit"));
        assert!(out.contains(r##"fill="#ffffff""##) && out.ends_with("</svg>"));
        assert_eq!(view_box(&out), Some((720.0, 340.0)));
    }
}
