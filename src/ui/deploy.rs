//! The user's own deployment on the page: a pasted `vllm serve` command or startup log becomes
//! the scenario through the importers beside the core (the CLI's `--from-command` and `--log`
//! read the same way), the log's figures are set beside Headroom's predictions, and the
//! scenario is written back as a command ("Copy command" in the header copies it).
//!
//! Markup built once, one delegated listener, and effects that write the results: the page's
//! pattern (see `ui/mod.rs`). Nothing leaves the browser: a picked file is read in place.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::import::command::Imported;
use crate::import::log::{Log, MAX_LOG};
use crate::import::replay::{self, Comparison, Derived};
use crate::import::{command, export};
use crate::io::url::{self, Field, UrlState};

use super::charts::xml_escape as esc;
use super::effect;
use super::state::AppState;

/// The section's markup: the command box, the log box (with a file picker), and the export.
fn deploy_html() -> String {
    concat!(
        r#"<details class="deploy panel" data-testid="deploy" id="deploy"><summary>Your own deployment: paste a <code>vllm serve</code> command or a startup log, or copy this scenario as a command</summary><div class="deploy-grid">"#,
        r#"<section aria-labelledby="cmd-h"><h2 id="cmd-h">A launch command</h2><label for="command-input"><code>vllm serve MODEL ...</code>, <code>python -m vllm.entrypoints.openai.api_server --model MODEL ...</code> or <code>docker run ... vllm/vllm-openai:TAG ...</code>, with any <code>export</code> lines before it</label><textarea id="command-input" data-testid="command-input" rows="5" spellcheck="false" autocomplete="off" autocapitalize="off" placeholder="vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 4 --max-model-len 32k"></textarea><p><button type="button" data-testid="command-import">Plan this command</button></p><div class="import-error" data-testid="command-error" id="command-error" role="alert"></div><div class="import-result" data-testid="command-result" id="command-result" aria-live="polite"></div></section>"#,
        r#"<section aria-labelledby="logi-h"><h2 id="logi-h">A startup log</h2><label for="log-input">What vLLM printed while starting, pasted or picked as a file (read here: nothing leaves the browser)</label><textarea id="log-input" data-testid="log-input" rows="5" spellcheck="false" autocomplete="off" autocapitalize="off" placeholder="(EngineCore pid=7) INFO ... Available KV cache memory: 54.2 GiB"></textarea><p class="log-actions"><button type="button" data-testid="log-import">Compare with this log</button> <label class="file">or a file: <input type="file" id="log-file" data-testid="log-file" accept=".log,.txt,text/plain"></label></p><div class="import-error" data-testid="log-error" id="log-error" role="alert"></div><div class="import-result" data-testid="log-result" id="log-result" aria-live="polite"></div></section>"#,
        r#"<section class="export" aria-labelledby="exp-h"><h2 id="exp-h">This scenario as a command</h2><p class="hint">Only the flags that differ from vLLM's defaults for the release; "Copy command" at the top copies it.</p><pre class="log" data-testid="command-export" id="command-export" tabindex="0"></pre><p class="hint" id="command-left-out" data-testid="command-left-out"></p></section>"#,
        r#"</div></details>"#,
    )
    .to_string()
}

/// The scenario as a `vllm serve` command: the model by its Hugging Face repo (a pasted
/// config.json by the name it gives), the drafter by its repo.
pub(crate) fn exported(app: AppState) -> Option<export::Exported> {
    let state = app.checked.with_untracked(|(s, _)| s.clone());
    let s = app.scenario.with_untracked(|s| s.as_ref().ok().cloned())?;
    let model = match state.get(Field::Model) {
        Some(id) if state.get(Field::Config).is_none() => export::repo_of(id),
        _ => export::repo_of_named(&s),
    };
    let spec_model = state.get(Field::DraftModel).map(export::repo_of);
    Some(export::command(&s, &export::Names { model, spec_model }))
}

/// A state from inputs: each pair set in turn; the ones the page refuses are named.
fn state_of(pairs: &[(Field, String)], into: &mut UrlState, refused: &mut Vec<String>) {
    for (f, t) in pairs {
        if let Err(m) = into.set(*f, t) {
            refused.push(format!("--{} {t}: {m}", f.flag()));
        }
    }
}

/// What a command import says: every flag read, every one not read with its reason, the
/// page's notes, and the inputs the page refused.
pub(crate) fn command_result_html(
    c: &Imported,
    refused: &[String],
    unknown: Option<&str>,
) -> String {
    let mut h = String::new();
    if let Some(m) = unknown {
        h.push_str(&format!(
            r##"<p class="ask" data-testid="command-unknown-model">Headroom does not know the model <code>{}</code>: paste its <code>config.json</code> in the <a href="#config-field" data-goto="config">Model section</a> (the command's other flags are set).</p>"##,
            esc(m)
        ));
    }
    h.push_str(&format!(
        "<p>Read from the {} command{}:</p><ul class=\"read\">",
        esc(c.form.as_str()),
        c.vllm_version
            .as_deref()
            .map(|v| format!(" (vLLM {} from the image tag)", esc(v)))
            .unwrap_or_default()
    ));
    for f in &c.flags {
        h.push_str(&format!(
            "<li><code>{}</code> = <code>{}</code> <small>({}, line {})</small></li>",
            esc(f.dest),
            esc(&f.value.to_string()),
            esc(&f.written),
            f.line
        ));
    }
    if let Some(n) = c.gpus_visible {
        h.push_str(&format!("<li>{n} GPU(s) visible</li>"));
    }
    h.push_str("</ul>");
    if !c.ignored.is_empty() {
        h.push_str("<p>Not read:</p><ul class=\"ignored\">");
        for i in &c.ignored {
            let shown = match &i.value {
                Some(v) if !v.is_empty() => format!("{} {v}", i.flag),
                _ => i.flag.clone(),
            };
            h.push_str(&format!(
                "<li><code>{}</code>: {}</li>",
                esc(&cut(&shown)),
                esc(&i.reason)
            ));
        }
        h.push_str("</ul>");
    }
    notes_html(&mut h, &c.notes, refused);
    h
}

/// A long value cut to its start, so a list stays readable on a phone.
fn cut(t: &str) -> String {
    if t.chars().count() > 120 {
        format!("{}…", t.chars().take(120).collect::<String>())
    } else {
        t.to_string()
    }
}

fn notes_html(h: &mut String, notes: &[String], refused: &[String]) {
    for r in refused {
        h.push_str(&format!(
            "<p class=\"warn\">Not set (the page refuses it): {}</p>",
            esc(r)
        ));
    }
    for n in notes {
        h.push_str(&format!("<p class=\"note\">{}</p>", esc(n)));
    }
}

/// A compared figure's name, as vLLM's log line says it.
fn figure_label(key: &str) -> &str {
    match key {
        "model_loading" => "Model loading took",
        "available_kv_cache" => "Available KV cache memory",
        "gpu_kv_cache_tokens" => "GPU KV cache size",
        "max_concurrency" => "Maximum concurrency",
        "max_concurrency.tokens_per_request" => "tokens per request",
        "num_gpu_blocks" => "# GPU blocks",
        "cuda_graph_estimate" => "Estimated CUDA graph memory",
        "cuda_graph_actual" => "CUDA graph memory (captured)",
        "capacity_error.available" => "capacity error: available KV",
        "init_error.free" => "init error: free",
        "init_error.total" => "init error: total",
        "init_error.requested" => "init error: requested",
        other => other,
    }
}

/// A figure as the log prints it.
fn figure(x: f64, unit: &str) -> String {
    match unit {
        "B" => format!("{} B", crate::calc::units::thousands(x.max(0.0) as u128)),
        "tokens" | "blocks" => format!(
            "{} {unit}",
            crate::calc::units::thousands(x.max(0.0) as u128)
        ),
        "x" => format!("{x:.2}x"),
        _ => format!("{x:.2} {unit}"),
    }
}

/// The log's comparison: each figure the log printed beside the prediction, with the
/// difference, then what the log implies (derived), and what the log itself says.
pub(crate) fn log_result_html(l: &Log, rows: &[Comparison], derived: &[Derived]) -> String {
    let mut h = format!(
        "<p>vLLM {}: {}. {} reading(s).</p>",
        esc(l.vllm_version.as_deref().unwrap_or("release not known")),
        esc(&l.version_basis),
        l.readings.len()
    );
    if rows.is_empty() {
        h.push_str("<p>The log prints no figure Headroom predicts.</p>");
    } else {
        h.push_str(concat!(
            r#"<div class="scroll" tabindex="0" role="region" aria-label="Predicted against measured"><table class="compare" data-testid="log-comparison"><caption>Predicted (without the log's figures) against measured (the log)</caption>"#,
            "<thead><tr><th scope=\"col\">figure</th><th scope=\"col\">predicted</th><th scope=\"col\">measured</th><th scope=\"col\">difference</th><th scope=\"col\">line</th><th scope=\"col\">prediction</th></tr></thead><tbody>"
        ));
        for c in rows {
            let diff = c.difference.map_or_else(
                || "—".to_string(),
                |d| {
                    let rel = c
                        .relative()
                        .map(|r| format!(" ({:+.1} %)", 100.0 * r))
                        .unwrap_or_default();
                    format!(
                        "{}{}{rel}",
                        if d >= 0.0 { "+" } else { "−" },
                        figure(d.abs(), c.unit)
                    )
                },
            );
            h.push_str(&format!(
                "<tr data-figure=\"{}\"><th scope=\"row\">{}{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&c.figure),
                esc(figure_label(&c.figure)),
                c.rank.map(|r| format!(" <small>rank {r}</small>")).unwrap_or_default(),
                c.predicted.map_or_else(|| "not reached".to_string(), |p| figure(p, c.unit)),
                figure(c.measured, c.unit),
                diff,
                c.line,
                c.provenance.as_ref().map_or(String::new(), |p| format!(
                    r#"<span class="badge {}" title="{}">{}</span>"#,
                    p.label(),
                    esc(p.basis()),
                    p.label()
                ))
            ));
        }
        h.push_str("</tbody></table></div>");
    }
    if !derived.is_empty() {
        h.push_str("<p>What the log implies <span class=\"badge derived\">derived</span>:</p><ul class=\"derived\">");
        for d in derived {
            h.push_str(&format!(
                "<li><code>{}</code> = {} <small>({})</small></li>",
                esc(d.figure),
                esc(&figure(d.value, d.unit)),
                esc(&d.from)
            ));
        }
        h.push_str("</ul>");
    }
    h.push_str(
        "<p class=\"note\">The log's figures are set as measured inputs (the badges in the form say so); the predictions are the plan without them.</p>",
    );
    for c in &l.conflicts {
        h.push_str(&format!("<p class=\"warn\">{}</p>", esc(c)));
    }
    for n in &l.notes {
        h.push_str(&format!("<p class=\"note\">{}</p>", esc(n)));
    }
    h
}

/// The comparison for the log against the inputs as they are now, planned without the log's
/// measurements.
fn comparison(app: AppState, l: &Log) -> Result<(Vec<Comparison>, Vec<Derived>), String> {
    let mut state = app.checked.with(|(s, _)| s.clone());
    // Only the log's own measurements are left out; a term typed over one stays, as a flag
    // given beside --log stays in the CLI's prediction.
    for (f, t) in replay::log_inputs(l).measured {
        if state.get(f) == Some(t.as_str()) {
            let _ = state.set(f, "");
        }
    }
    let s = url::scenario(&state).map_err(|e| format!("--{}: {}", e.field.flag(), e.message))?;
    let p = crate::calc::plan(&s).map_err(|e| e.to_string())?;
    Ok((replay::compare(l, &p), replay::derived(l, &p)))
}

fn set_html(id: &str, html: &str) {
    if let Some(el) = document().get_element_by_id(id) {
        el.set_inner_html(html);
    }
}

fn text_of(id: &str) -> String {
    document()
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
        .map(|t| t.value())
        .unwrap_or_default()
}

/// Loads a state as a new history entry (Back returns to the scenario it replaced).
pub(crate) fn load_state(app: AppState, next: &UrlState) {
    if let Ok(h) = window().history() {
        let now = app.checked.with_untracked(|(s, _)| url::link(s));
        let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&now));
        let _ = h.push_state_with_url(&JsValue::NULL, "", Some(&url::link(next)));
    }
    app.notices.set(Vec::new());
    app.load(next);
}

/// The unit the page shows, kept across an import.
fn kept_unit(app: AppState, into: &mut UrlState) {
    if let Some(u) = app
        .checked
        .with_untracked(|(s, _)| s.get(Field::Unit).map(str::to_string))
    {
        let _ = into.set(Field::Unit, &u);
    }
}

/// "Plan this command": the command's scenario replaces the current one, and a log compared
/// before (another scenario's) is set aside.
fn import_command(app: AppState) {
    let text = text_of("command-input");
    set_html("command-result", "");
    match command::import(&text) {
        Err(e) => set_html(
            "command-error",
            &format!("<p>Not read: {}</p>", esc(&e.to_string())),
        ),
        Ok(c) => {
            set_html("command-error", "");
            let page = c.page_inputs();
            let mut next = UrlState::default();
            kept_unit(app, &mut next);
            let mut refused = Vec::new();
            state_of(&page.pairs, &mut next, &mut refused);
            let mut notes = page.notes.clone();
            notes.extend(c.notes.iter().cloned());
            notes.dedup();
            let c = Imported { notes, ..c };
            set_html(
                "command-result",
                &command_result_html(&c, &refused, page.unknown_model.as_deref()),
            );
            app.cited.set(None);
            set_html("log-result", "");
            set_html("log-error", "");
            load_state(app, &next);
            if page.unknown_model.is_some() {
                super::panels::go_to("config");
            }
        }
    }
}

/// "Compare with this log": the log's flags (its `non-default args`) become the scenario when
/// it has them, else the current one stays; its settings and measurements are set on top. The
/// release the log states wins (it is that run's); one Headroom does not model is planned
/// under the release the form names, with a note, or refused when the form names none.
pub(crate) fn import_log(app: AppState, text: &str) {
    set_html("log-result", "");
    let l = match crate::import::log::read(text) {
        Err(e) => {
            set_html("log-error", &format!("<p>Not read: {}</p>", esc(&e.0)));
            return;
        }
        Ok(l) => l,
    };
    if !l.conflicts.is_empty() {
        set_html(
            "log-error",
            &format!(
                "<p>The log's readings contradict each other (two launches pasted together?): {}. Paste the lines of one launch.</p>",
                esc(&l.conflicts.join("; "))
            ),
        );
        return;
    }
    let given = replay::log_inputs(&l);
    let current = app.checked.with_untracked(|(s, _)| s.clone());
    let mut next = match &given.command {
        Some(_) => {
            let mut s = UrlState::default();
            kept_unit(app, &mut s);
            s
        }
        None => current.clone(),
    };
    let mut refused = Vec::new();
    if let Some(c) = &given.command {
        state_of(&c.pairs, &mut next, &mut refused);
    }
    let mut notes: Vec<String> = Vec::new();
    for (f, t) in &given.settings {
        match next.set(*f, t) {
            Ok(()) => {}
            // A release Headroom does not model: planned under the release the form names, if
            // the user chose one, and said so; else refused, never planned silently.
            Err(m) if *f == Field::Vllm => match current.get(Field::Vllm) {
                Some(chosen) => {
                    let _ = next.set(Field::Vllm, chosen);
                    notes.push(format!("The log's release {t} ({}) is not modelled ({m}); it is planned under vLLM {chosen}, the release the form names.", l.version_basis));
                }
                None => {
                    set_html(
                        "log-error",
                        &format!(
                            "<p>The log's release {} ({}): {}. Choose a release in the form (vLLM release) and compare again to plan it under that release's rules.</p>",
                            esc(t),
                            esc(&l.version_basis),
                            esc(&m)
                        ),
                    );
                    return;
                }
            },
            Err(m) => refused.push(format!("--{} {t}: {m}", f.flag())),
        }
    }
    state_of(&given.measured, &mut next, &mut refused);
    set_html("log-error", "");
    notes.extend(given.command.iter().flat_map(|c| c.notes.iter().cloned()));
    if let Some(m) = given.command.as_ref().and_then(|c| c.unknown_model.clone()) {
        notes.insert(0, format!("Headroom does not know the log's model {m}: paste its config.json in the Model section; the log's other flags are set."));
    }
    if !refused.is_empty() || !notes.is_empty() {
        let mut h = String::new();
        notes_html(&mut h, &notes, &refused);
        set_html("log-error", &h);
    }
    // A command read before described another scenario when the log brings its own flags.
    if given.command.is_some() {
        set_html("command-result", "");
    }
    load_state(app, &next);
    app.cited.set(Some(Arc::new(l)));
}

/// A picked file: read in place (at most [`MAX_LOG`] bytes and one more, so the reader refuses
/// a longer one by its size), shown in the box, then compared.
fn read_file(app: AppState, input: &web_sys::HtmlInputElement) {
    let Some(file) = input.files().and_then(|f| f.get(0)) else {
        return;
    };
    let size = file.size();
    if size > (MAX_LOG + 1) as f64 {
        set_html(
            "log-error",
            &format!(
                "<p>Not read: the file is {} bytes; Headroom reads logs up to {MAX_LOG} bytes (the start-up, up to the first request).</p>",
                size as u64
            ),
        );
        return;
    }
    let done = Closure::<dyn FnMut(JsValue)>::new(move |v: JsValue| {
        let text = v.as_string().unwrap_or_default();
        if let Some(t) = document()
            .get_element_by_id("log-input")
            .and_then(|e| e.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
        {
            t.set_value(&text);
        }
        import_log(app, &text);
    });
    let failed = Closure::<dyn FnMut(JsValue)>::new(move |_| {
        set_html(
            "log-error",
            "<p>Not read: the browser could not read the file.</p>",
        );
    });
    let _ = file.text().then2(&done, &failed);
    done.forget();
    failed.forget();
}

/// The section, mounted with the form and the panels (after the first verdict).
pub fn deploy(app: AppState) -> impl IntoView {
    // The comparison follows the inputs: change a flag and the prediction moves.
    effect(move || {
        let Some(l) = app.cited.get() else {
            return;
        };
        app.later.track();
        match comparison(app, &l) {
            Ok((rows, derived)) => set_html("log-result", &log_result_html(&l, &rows, &derived)),
            Err(e) => set_html(
                "log-result",
                &format!("<p class=\"warn\">No prediction to compare: these inputs give no plan ({}).</p>", esc(&e)),
            ),
        }
    });
    // The export follows the slow lane: it is not on the path of a keystroke.
    effect(move || {
        app.later.track();
        let e = exported(app);
        if let Some(el) = document().get_element_by_id("command-export") {
            el.set_text_content(Some(
                e.as_ref()
                    .map_or("These inputs give no scenario (see the verdict).", |e| {
                        e.text.as_str()
                    }),
            ));
        }
        if let Some(el) = document().get_element_by_id("command-left-out") {
            let t = e
                .filter(|e| !e.left_out.is_empty())
                .map(|e| {
                    format!(
                        "Left out (a command cannot carry them): {}",
                        e.left_out.join("; ")
                    )
                })
                .unwrap_or_default();
            el.set_text_content(Some(&t));
        }
    });
    let on_click = move |ev: web_sys::MouseEvent| {
        if super::closest(&ev, "[data-testid=command-import]").is_some() {
            import_command(app);
        } else if super::closest(&ev, "[data-testid=log-import]").is_some() {
            import_log(app, &text_of("log-input"));
        } else if let Some(a) = super::closest(&ev, "a[data-goto]") {
            ev.prevent_default();
            super::panels::go_to(&a.get_attribute("data-goto").unwrap_or_default());
        }
    };
    let on_change = move |ev: web_sys::Event| {
        if let Some(input) = super::target_element(&ev)
            .filter(|e| e.id() == "log-file")
            .and_then(|e| e.dyn_into::<web_sys::HtmlInputElement>().ok())
        {
            read_file(app, &input);
        }
    };
    view! {
        <div class="deploy-wrap" inner_html=deploy_html() on:click=on_click on:change=on_change></div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_command_or_a_log_holds_is_shown_as_text_never_as_markup() {
        let c = command::import("vllm serve m --served-model-name '<img src=x onerror=alert(1)>' --max-model-len 4096 --bogus-flag '<b>'").unwrap();
        let h = command_result_html(&c, &["--tp <i>: no".into()], Some("<script>"));
        assert!(
            !h.contains("<img")
                && !h.contains("<script>")
                && !h.contains("<b>")
                && !h.contains("<i>"),
            "{h}"
        );
        assert!(h.contains("&lt;script&gt;"), "{h}");
        assert!(h.contains("max_model_len"), "{h}");
        let l = crate::import::log::read("Available KV cache memory: 6.51 GiB\nnon-default args: {'model_tag': '<svg onload=1>'}").unwrap();
        let h = log_result_html(&l, &[], &[]);
        assert!(!h.contains("<svg"), "{h}");
    }

    #[test]
    fn figures_read_as_the_log_prints_them() {
        assert_eq!(figure(443_968.0, "tokens"), "443,968 tokens");
        assert_eq!(figure(54.2, "GiB"), "54.20 GiB");
        assert_eq!(figure(13.549, "x"), "13.55x");
        assert_eq!(figure(131_083.0, "B"), "131,083 B");
        assert_eq!(
            figure_label("available_kv_cache"),
            "Available KV cache memory"
        );
    }
}
