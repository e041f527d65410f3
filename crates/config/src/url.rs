//! A model server's base URL as the user wrote it: checked once, for every command (run,
//! `exec`, `login`, `doctor`), so a URL without a scheme gets one clear message rather than
//! an HTTP library's "relative URL without a base" at the first request.

/// A base URL as typed: http or https, trailing slashes dropped. Without a scheme, an
/// address on this machine or the local network (`localhost:8080/v1`, `127.0.0.1:43969/v1`,
/// `box:8000/v1`) is taken as `http://`, which is how such servers answer; any other host
/// must say which it is.
pub fn check_url(text: &str) -> Result<String, String> {
    let text = text.trim().trim_end_matches('/');
    if text.is_empty() {
        return Err("give the server's URL, such as http://localhost:8080/v1".into());
    }
    if !text.contains("://") {
        let host = host_of(text);
        if is_local(host) {
            return check_url(&format!("http://{text}"));
        }
        return Err(format!(
            "`{text}` has no scheme: write https://{text} (or http://{text} for a server without TLS)"
        ));
    }
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Ok(text.to_string())
        }
        Ok(_) => Err("the URL must start with http:// or https:// and name a host".into()),
        Err(e) => Err(format!("`{text}` is not a URL ({e})")),
    }
}

/// The host of a URL written without a scheme: before the port, path or query.
fn host_of(text: &str) -> &str {
    if let Some(rest) = text.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    text.split(['/', '?', '#'])
        .next()
        .unwrap_or(text)
        .split(':')
        .next()
        .unwrap_or(text)
}

/// Whether `host` is this machine or the local network: a name without dots (`box`),
/// `localhost`, `*.local`, a loopback, private or link-local address.
fn is_local(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    if host.is_empty() {
        return false;
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return match ip {
            std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
            std::net::IpAddr::V6(v6) => v6.is_loopback(),
        };
    }
    host == "localhost"
        || host.ends_with(".localhost")
        || host.ends_with(".local")
        || host.ends_with(".lan")
        || (!host.contains('.') && host.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_trimmed() {
        assert_eq!(
            check_url(" http://box:8000/v1/ ").unwrap(),
            "http://box:8000/v1"
        );
        assert!(check_url("ftp://box/v1").is_err());
        assert!(check_url("").is_err());
    }

    /// Issue 31: a URL without a scheme gets one clear answer; local addresses get http://.
    #[test]
    fn a_url_without_a_scheme_is_http_when_local_and_refused_clearly_otherwise() {
        for (typed, taken) in [
            ("127.0.0.1:43969/v1", "http://127.0.0.1:43969/v1"),
            ("localhost:8080/v1", "http://localhost:8080/v1"),
            ("box:8000", "http://box:8000"),
            ("192.168.1.20:11434/v1/", "http://192.168.1.20:11434/v1"),
            ("[::1]:8080/v1", "http://[::1]:8080/v1"),
            ("gpu.local:8000/v1", "http://gpu.local:8000/v1"),
        ] {
            assert_eq!(check_url(typed).unwrap(), taken, "{typed}");
        }
        let error = check_url("api.example.com/v1").unwrap_err();
        assert_eq!(
            error,
            "`api.example.com/v1` has no scheme: write https://api.example.com/v1 (or http://api.example.com/v1 for a server without TLS)"
        );
        assert!(check_url("8.8.8.8:80/v1").is_err());
    }
}
