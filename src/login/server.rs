//! Before a key is asked for: is the server there, and does it answer like an
//! OpenAI-compatible API? A server that is down, a web page where the API should be, or an
//! address missing its `/v1` is said at once, and in a terminal the user chooses again (or
//! takes the `/v1` address offered) instead of typing a key for nothing.

use super::{LoginError, LoginTarget, prompt, say};
use crate::model::probe::{self, ListError, Listing};

/// The server to log in to, checked: asked for in the terminal when `ask` (again after each
/// one that does not answer), else `current`. Returns the model list the server gave
/// without a key, when it gave one.
pub(super) async fn settle(
    mut current: LoginTarget,
    ask: bool,
) -> Result<(LoginTarget, Option<Listing>), LoginError> {
    loop {
        let target = if ask {
            prompt::server(&current)?
        } else {
            current.clone()
        };
        say(format!("… checking {}", target.base_url));
        match probe::list_models(&target.base_url, Default::default(), None).await {
            Ok(listing) => return Ok((target, Some(listing))),
            // It answers; whether the key is right is the next question. A server error
            // (a proxy whose model server is down) is not an answer.
            Err(ListError::Refused { .. }) => return Ok((target, None)),
            Err(ListError::Failed { status, .. }) if status < 500 => return Ok((target, None)),
            Err(ListError::NotCompatible {
                answered,
                suggest: Some(v1),
            }) => {
                say(format!(
                    "✗ {}/models answered {answered}, but {v1}/models lists models.",
                    target.base_url
                ));
                if !ask {
                    return Err(LoginError::Failed(format!(
                        "{} is not the API's address; {v1} is: use it as the base URL. Nothing was saved.",
                        target.base_url
                    )));
                }
                if prompt::confirm(&format!("Use {v1} instead?"))? {
                    return Ok((target.at(v1), None));
                }
            }
            Err(e) => {
                let problem = match &e {
                    ListError::Unreachable(cause) => format!(
                        "cannot reach {}: {cause}. {}",
                        target.base_url,
                        target.start_hint()
                    ),
                    other => format!("{}/models answered {other}. ", target.base_url),
                };
                if !ask {
                    return Err(LoginError::Failed(format!("{problem}Nothing was saved.")));
                }
                say(format!("✗ {}", problem.trim_end()));
                say("Choose the server again (Ctrl-C stops; nothing was saved).");
            }
        }
        current = target;
    }
}
