use pebble_lex::{tokenize, LexError, Token};

fn kw(k: &'static str) -> Token {
    Token::Keyword(k)
}
fn id(s: &str) -> Token {
    Token::Ident(s.to_string())
}
fn p(s: &'static str) -> Token {
    Token::Punct(s)
}

#[test]
fn a_let_statement() {
    assert_eq!(
        tokenize("let total = count * 2; // twice").unwrap(),
        vec![kw("let"), id("total"), p("="), id("count"), p("*"), Token::Int(2), p(";")]
    );
}

#[test]
fn keywords_are_case_sensitive() {
    assert_eq!(tokenize("If if").unwrap(), vec![id("If"), kw("if")]);
}

#[test]
fn strings_and_operators() {
    assert_eq!(
        tokenize("f(\"a\\\"b\") != nil -> x::y").unwrap(),
        vec![
            id("f"), p("("), Token::Str("a\"b".into()), p(")"), p("!="), kw("nil"),
            p("->"), id("x"), p("::"), id("y"),
        ]
    );
}

#[test]
fn errors_carry_lines() {
    assert_eq!(tokenize("a\nb\n  @"), Err(LexError::UnexpectedChar { line: 3, ch: '@' }));
    assert_eq!(tokenize("\"open"), Err(LexError::UnterminatedString { line: 1 }));
}

#[test]
fn coroutine_keywords() {
    assert_eq!(
        tokenize("async fn tick() { yield sleep(1).await }").unwrap(),
        vec![
            kw("async"), kw("fn"), id("tick"), p("("), p(")"), p("{"), kw("yield"),
            id("sleep"), p("("), Token::Int(1), p(")"), p("."), kw("await"), p("}"),
        ]
    );
}
