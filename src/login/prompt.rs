//! `tandem login`'s questions in a terminal: which server, its key (typed without echo), and
//! which model.

use std::io;

use dialoguer::console::Term;
use dialoguer::theme::{ColorfulTheme, Theme};
use dialoguer::{Confirm, FuzzySelect, Input, Password, Select};

use super::LoginTarget;
use crate::config::presets::{PRESETS, Preset};

/// How many attempts at a key before giving up.
pub(crate) const KEY_ATTEMPTS: usize = 3;

fn theme() -> ColorfulTheme {
    ColorfulTheme::default()
}

/// A dialoguer failure as an I/O error (the terminal went away, or Ctrl-C).
fn io_error(e: dialoguer::Error) -> io::Error {
    match e {
        dialoguer::Error::IO(e) => e,
    }
}

/// The server: one of the presets, or a URL; the configured one is selected first (a URL of
/// the user's own filled in), so logging in again after a key was refused is Enter, Enter.
pub(crate) fn server(current: &LoginTarget) -> io::Result<LoginTarget> {
    let mut items: Vec<String> = PRESETS.iter().map(describe).collect();
    items.push("another OpenAI-compatible server (enter its URL)".into());
    let default = match current.provider {
        Some(configured) => PRESETS
            .iter()
            .position(|p| p.name == configured.name)
            .unwrap_or(0),
        None => PRESETS.len(),
    };
    let picked = Select::with_theme(&theme())
        .with_prompt("Which model server? (arrow keys, Enter)")
        .items(&items)
        .default(default)
        .interact()
        .map_err(io_error)?;
    if let Some(preset) = PRESETS.get(picked) {
        return Ok(LoginTarget::preset(preset));
    }
    let theme = theme();
    let mut input = Input::with_theme(&theme)
        .with_prompt("Base URL of the server (the part before /chat/completions)")
        .validate_with(|text: &String| super::check_url(text).map(|_| ()));
    if current.provider.is_none() {
        input = input.with_initial_text(current.base_url.clone());
    }
    let url: String = input.interact_text().map_err(io_error)?;
    Ok(LoginTarget::custom(super::check_url(&url).unwrap_or(url)))
}

fn describe(preset: &Preset) -> String {
    let key = if preset.requires_key {
        "API key"
    } else {
        "on your machine, no key"
    };
    format!("{:<11} {} ({key})", preset.name, preset.base_url)
}

/// The key, typed without echo; `None` when the user left it empty (to keep the `stored`
/// one, or where the server needs none).
pub(crate) fn key(
    target: &LoginTarget,
    attempt: usize,
    stored: bool,
) -> io::Result<Option<String>> {
    let empty = if stored {
        "; press Enter to keep the stored key"
    } else if target.needs_key {
        ""
    } else {
        "; press Enter if the server needs none"
    };
    let mut prompt = format!(
        "API key for {} (not shown as you type{empty})",
        target.label()
    );
    if attempt > 1 {
        prompt.push_str(&format!(", attempt {attempt} of {KEY_ATTEMPTS}"));
    }
    let theme = theme();
    let key = Password::with_theme(&theme)
        .with_prompt(&prompt)
        .allow_empty_password(true)
        .report(false)
        .interact()
        .map_err(io_error)?;
    let key = key.trim().to_string();
    // The theme would show eight stars whatever was typed; say what happened instead.
    let what = match (key.is_empty(), stored) {
        (false, _) => "(typed, not shown)",
        (true, true) => "(nothing typed: keeping the stored key)",
        (true, false) => "(nothing typed)",
    };
    let mut line = String::new();
    if theme
        .format_input_prompt_selection(&mut line, &prompt, what)
        .is_ok()
    {
        Term::stderr().write_line(&line)?;
    }
    Ok((!key.is_empty()).then_some(key))
}

/// A yes-or-no question, yes unless the user says no.
pub(crate) fn confirm(question: &str) -> io::Result<bool> {
    Confirm::with_theme(&theme())
        .with_prompt(question)
        .default(true)
        .interact()
        .map_err(io_error)
}

/// The model: picked from the server's list (type to filter), or typed when it lists none.
pub(crate) fn model(models: &[String], current: &str) -> io::Result<String> {
    if models.is_empty() {
        return Input::with_theme(&theme())
            .with_prompt("Model id (the server does not list its models)")
            .with_initial_text(current)
            .interact_text()
            .map_err(io_error);
    }
    let default = models.iter().position(|m| m == current).unwrap_or(0);
    let picked = FuzzySelect::with_theme(&theme())
        .with_prompt(format!(
            "Which model? ({} listed; type to filter, Enter to choose)",
            models.len()
        ))
        .items(models)
        .default(default)
        .max_length(12)
        .interact()
        .map_err(io_error)?;
    Ok(models[picked].clone())
}
