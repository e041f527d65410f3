use tinylog::{format_line, Level, Logger};

#[test]
fn labels_follow_the_color_feature() {
    for level in [Level::Trace, Level::Debug, Level::Info, Level::Warn, Level::Error] {
        let line = format_line(level, "disk almost full");
        if cfg!(feature = "color") {
            assert!(line.contains("\x1b["), "expected colour codes in {line:?}");
            assert!(line.contains(level.as_str()));
            assert!(line.ends_with(" disk almost full"), "{line:?}");
        } else {
            assert_eq!(line, format!("{} disk almost full", level.as_str()));
        }
    }
}

#[test]
fn logger_output_follows_the_color_feature() {
    let mut log = Logger::new(Vec::new(), Level::Info);
    log.log(Level::Warn, "cache miss").unwrap();
    log.log(Level::Debug, "dropped").unwrap();
    let text = String::from_utf8(log.into_inner()).unwrap();
    if cfg!(feature = "color") {
        assert!(text.contains("\x1b[") && text.contains("cache miss"), "{text:?}");
    } else {
        assert_eq!(text, "WARN cache miss\n");
    }
}

/// The value of `key` in the `[features]` table of Cargo.toml, as raw text (arrays may span lines).
fn feature_entry(manifest: &str, key: &str) -> Option<String> {
    let mut in_features = false;
    let mut lines = manifest.lines();
    while let Some(line) = lines.next() {
        let line = line.split('#').next().unwrap().trim();
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            if k.trim().trim_matches('"') == key {
                let mut value = v.trim().to_string();
                while value.starts_with('[') && !value.contains(']') {
                    match lines.next() {
                        Some(more) => value.push_str(more.split('#').next().unwrap().trim()),
                        None => break,
                    }
                }
                return Some(value);
            }
        }
    }
    None
}

#[test]
fn color_feature_exists_and_is_default() {
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    assert!(
        feature_entry(&manifest, "color").is_some(),
        "Cargo.toml should declare a `color` feature"
    );
    let default = feature_entry(&manifest, "default").expect("a `default` feature list");
    let names: Vec<String> = default
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|s| s.trim().trim_matches('"').trim_matches('\'').to_string())
        .collect();
    assert!(names.iter().any(|n| n == "color"), "default features should include color: {default}");
}
