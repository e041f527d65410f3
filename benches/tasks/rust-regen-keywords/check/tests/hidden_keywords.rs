use pebble_lex::keywords::{keyword, KEYWORDS};
use pebble_lex::{tokenize, Token};

fn listed_words() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/keywords.txt"))
        .expect("keywords.txt");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

#[test]
fn keyword_list_is_clean() {
    let words = listed_words();
    let mut unique = words.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), words.len(), "keywords.txt lists a word twice: {words:?}");
    for w in &words {
        assert!(
            w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{w:?} in keywords.txt is not a valid keyword"
        );
    }
}

#[test]
fn generated_table_matches_keywords_txt() {
    let mut words = listed_words();
    words.sort();
    let table: Vec<String> = KEYWORDS.iter().map(|s| s.to_string()).collect();
    assert_eq!(table, words, "src/keywords.rs is out of date with keywords.txt");
    for w in &words {
        assert_eq!(keyword(w), Some(w.as_str()));
    }
}

#[test]
fn new_and_old_keywords_recognised() {
    for w in ["async", "await", "yield", "let", "fn", "while", "import", "struct"] {
        assert_eq!(keyword(w), Some(w), "{w} should be a keyword");
    }
    for w in ["Await", "ASYNC", "asynchronous", "awaits", "yielded", "coroutine"] {
        assert_eq!(keyword(w), None, "{w} should not be a keyword");
    }
}

#[test]
fn lexer_uses_the_new_keywords() {
    assert_eq!(
        tokenize("await Await async_io").unwrap(),
        vec![
            Token::Keyword("await"),
            Token::Ident("Await".into()),
            Token::Ident("async_io".into())
        ]
    );
}
