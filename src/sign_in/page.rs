//! The sign-in page: every word it says to the person, and how it is shown. Plain HTML with no
//! script, readable on a phone, shown only in its own window (never framed), sending its forms
//! only to this server, and never cached. What a client says of itself is shown as its own words,
//! escaped, never as the page's.

use std::sync::LazyLock;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use html_escape::encode_quoted_attribute;
use sha2::{Digest, Sha256};

use crate::access::offer::Offer;
use crate::catalogue::{Action, Audience, Operation, ToolSpec};
use crate::config::ConsentMode;
use crate::stack::Scope;

const STYLE: &str = "body{font:16px/1.45 system-ui,sans-serif;margin:0;padding:1em 1.1em;\
max-width:34em;color:#1d1d1f;background:#fafaf7;overflow-wrap:anywhere}\
h1{font-size:1.3em;line-height:1.25;margin:.1em 0 .5em}h2{font-size:1.05em;margin:1em 0 .3em}\
p{margin:.5em 0}.who{background:#fff;border:1px solid #ddd;border-radius:10px;padding:.5em .9em;\
margin:.8em 0}.who p{margin:.25em 0}.said{font-weight:600}.problem{background:#fff4f2;border:1px solid #e3a293;\
border-radius:10px;padding:.8em 1em}label{display:block;font-weight:600;margin:1em 0 .3em}\
input[type=password]{width:100%;box-sizing:border-box;font:inherit;padding:.6em;border:1px solid #999;\
border-radius:8px}button{font:inherit;padding:.7em 1.4em;border-radius:8px;border:1px solid #555;\
margin:.8em .6em 0 0;background:#fff}button.yes{background:#1d5c2e;color:#fff;border-color:#1d5c2e}\
ul{padding-left:1.2em;margin:.3em 0}li{margin:.2em 0}.small{font-size:.88em;color:#555}\
.changes{list-style:none;padding:0}.changes li{border-left:3px solid #b5651d;padding:0 0 0 .6em;\
margin:.4em 0}.act{font-weight:600}.agreed{font-size:.88em;background:#fff;\
border:1px solid #ddd;border-radius:10px;padding:.5em .8em}details{margin:.8em 0}\
summary{cursor:pointer;font-weight:600}details ul{font-size:.92em}";

/// The style's digest, which the page's content security policy names: the one inline thing it
/// may use.
static STYLE_HASH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()))
    )
});

/// Who is asking, as the page shows it.
pub struct Asking<'a> {
    /// What the client calls itself.
    pub name: Option<&'a str>,
    /// Where the person will be sent back to.
    pub redirect: &'a str,
    /// Where the client's metadata document was fetched from, if its id is one.
    pub document_host: Option<&'a str>,
}

/// The first page: who is asking, and a field for the key or key link; or, once a key link has
/// been traded for a key the stack could not yet be asked about, a button to ask again.
pub fn ask_for_key(asking: &Asking, form: &str, problem: Option<&str>, claimed: bool) -> Response {
    let mut body = heading("Connect your assistant to lemonfiber");
    body.push_str(&who(asking));
    if let Some(problem) = problem {
        body.push_str(&format!(
            "<p class=\"problem\">{}</p>",
            encode_quoted_attribute(problem)
        ));
    }
    let asked = if claimed {
        "<p>The key link has been used, and the key it brought is kept for this sign-in only.</p>\
         <button class=\"yes\" type=\"submit\">Check the key again</button>"
    } else {
        "<label for=\"credential\">Your integration key or key link</label>\
         <input type=\"password\" id=\"credential\" name=\"credential\" autocomplete=\"off\" \
         autocapitalize=\"off\" spellcheck=\"false\" required>\
         <p class=\"small\">An integration key starts with lfk_. A key link starts with https:// and \
         ends in /link#claim=…; it is used once. Make either on your lemonfiber stack: a member key \
         for yourself, or, if you run the stack, a read key (it only looks) or an act key (it can \
         also carry out the stack's actions). The key is checked with the stack, and you will see \
         what it allows before anything is shared.</p>\
         <button class=\"yes\" type=\"submit\">Check this key</button>"
    };
    body.push_str(&format!(
        "<form method=\"post\" action=\"/authorize\">\
         <input type=\"hidden\" name=\"form\" value=\"{}\">{asked}</form>",
        encode_quoted_attribute(form)
    ));
    page(StatusCode::OK, &body, None)
}

/// The second page: what the key will let the assistant change, each with what it disturbs and
/// how the person's yes is had under this server's consent mode; what it can read, folded into
/// one line; and allow or deny, on a phone's first screen.
pub fn ask_to_allow(asking: &Asking, form: &str, offer: &Offer, consent: ConsentMode) -> Response {
    let mut body = heading("Allow this assistant?");
    body.push_str(&who(asking));
    body.push_str(&format!("<p>{}</p>", scope_words(offer.scope())));
    let changes: Vec<(&ToolSpec, Action)> = offer
        .tools()
        .filter_map(|tool| match tool.operation {
            Operation::Act(action) => Some((tool, action)),
            _ => None,
        })
        .collect();
    let reads: Vec<String> = offer
        .tools()
        .filter(|tool| matches!(tool.operation, Operation::Read(_)))
        .map(|tool| match offer.audience {
            Audience::Household => offer.description(tool),
            Audience::Operator => tool.title.to_owned(),
        })
        .collect();
    if changes.is_empty() && reads.is_empty() {
        body.push_str("<p>It will be offered nothing but a check of its connection.</p>");
    } else {
        body.push_str(&what_it_changes(&changes, offer.audience, consent));
        body.push_str(&what_it_reads(offer, &reads));
    }
    body.push_str(&format!(
        "<form method=\"post\" action=\"/authorize\">\
         <input type=\"hidden\" name=\"form\" value=\"{}\">\
         <button class=\"yes\" type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
        encode_quoted_attribute(form)
    ));
    body.push_str(
        "<p class=\"small\">The assistant's provider is given a sealed token, not your key: it \
         works only with this server, for an hour at a time, renewed for up to 30 days while the \
         key is valid. It ends when the key is revoked on the stack, when you sign out in the \
         assistant, or when whoever runs this server ends it.</p>",
    );
    // Its answer sends the browser on to the client, which a browser counts as where the form
    // goes.
    let back_to = url::Url::parse(asking.redirect)
        .ok()
        .map(|redirect| redirect.origin().ascii_serialization());
    page(StatusCode::OK, &body, back_to.as_deref())
}

/// What the key can change, first: each action with what it disturbs and whether it is
/// rehearsed, then how the person's yes is had for them all.
fn what_it_changes(
    changes: &[(&ToolSpec, Action)],
    audience: Audience,
    consent: ConsentMode,
) -> String {
    if changes.is_empty() {
        let nothing = match audience {
            Audience::Household => "It can change nothing: it only looks.",
            Audience::Operator => "It can change nothing on the stack.",
        };
        return format!("<h2>{nothing}</h2>");
    }
    let mut shown = String::from("<h2>It can change</h2><ul class=\"changes\">");
    for (tool, action) in changes {
        shown.push_str(&format!(
            "<li><span class=\"act\">{}</span> <span class=\"small\">— {}</span></li>",
            encode_quoted_attribute(tool.title),
            disturbance(*action),
        ));
    }
    shown.push_str("</ul>");
    let unrehearsed: Vec<&str> = changes
        .iter()
        .filter(|(_, action)| action.rehearsal_tool().is_none())
        .map(|(tool, _)| tool.title)
        .collect();
    shown.push_str(&format!(
        "<p class=\"agreed\">{}</p>",
        encode_quoted_attribute(&how_agreed(consent, &unrehearsed, changes.len()))
    ));
    shown
}

/// What an action disturbs while it runs, as the contract's `x-lemonfiber-disturbs` says.
fn disturbance(action: Action) -> &'static str {
    match action {
        Action::Restart => "interrupts those services, and anyone watching, until they are back.",
        Action::Update => "interrupts what it updates, and anyone watching, until it is back.",
        Action::Diagnose => "its disruptive checks, if asked for, briefly interrupt services.",
        Action::DownloadsPause => "holds every download until resumed; interrupts no service.",
        Action::DownloadsResume => "starts held downloads again; interrupts no service.",
    }
}

/// How the person's yes to the actions shown is had under `consent` (docs/security.md's
/// table): asked in their assistant where it can ask, and otherwise what the mode lets stand.
/// `unrehearsed` names those with no rehearsal, which no offer can stand for; `of` is how many
/// are shown.
fn how_agreed(consent: ConsentMode, unrehearsed: &[&str], of: usize) -> String {
    let named = match unrehearsed {
        [] => String::new(),
        [one] => format!("“{one}”"),
        [all @ .., last] => format!("“{}” and “{last}”", all.join("”, “")),
    };
    let rehearsed = if unrehearsed.is_empty() {
        "Each is rehearsed first.".to_owned()
    } else if unrehearsed.len() == of {
        format!("{named}: no rehearsal.")
    } else {
        format!("All but {named} are rehearsed first.")
    };
    let asked = match consent {
        ConsentMode::Ask => {
            "Your assistant asks you before each, and nothing happens without your yes: an \
             assistant that cannot ask you cannot use them."
        }
        ConsentMode::Offer => {
            "Your assistant asks you before each; if it cannot ask you, or you do not answer, the \
             rehearsal stands for your yes."
        }
        ConsentMode::Both => {
            "Your assistant asks you before each, and no answer is a no; only where it cannot ask \
             you does the rehearsal stand for your yes."
        }
    };
    let unheard = match consent {
        ConsentMode::Ask => String::new(),
        _ if unrehearsed.is_empty() => String::new(),
        ConsentMode::Offer | ConsentMode::Both => format!(
            " {named} {} only on your yes, or on the assistant's call where it cannot ask.",
            if unrehearsed.len() == 1 {
                "runs"
            } else {
                "run"
            }
        ),
    };
    format!("{rehearsed} {asked}{unheard}")
}

/// What the key can read: a count and the first few, with the whole list folded away.
fn what_it_reads(offer: &Offer, reads: &[String]) -> String {
    if reads.is_empty() {
        return "<p>It can read nothing.</p>".to_owned();
    }
    let verb = match offer.audience {
        Audience::Household => "see",
        Audience::Operator => "read",
    };
    let count = match reads.len() {
        1 => "one thing".to_owned(),
        many => format!("{many} things"),
    };
    let mut shown = format!(
        "<details><summary>It can {verb} {count}<span class=\"small\"> · show them</span>\
         </summary><ul>"
    );
    for read in reads {
        shown.push_str(&format!("<li>{}</li>", encode_quoted_attribute(read)));
    }
    shown.push_str("</ul></details>");
    shown
}

/// A page that cannot go on: the sign-in request itself is at fault, or the form is spent.
pub fn cannot_go_on(status: StatusCode, problem: &str) -> Response {
    let mut body = heading("This sign-in cannot go on");
    body.push_str(&format!(
        "<p class=\"problem\">{}</p>",
        encode_quoted_attribute(problem)
    ));
    body.push_str(
        "<p>Start again from your assistant: add or reconnect lemonfiber there, and it opens a new \
         sign-in.</p>",
    );
    page(status, &body, None)
}

/// Why a client id names no client this page signs in.
pub const UNKNOWN_CLIENT: &str = "The assistant that sent you here is not one this server knows: its \
client id was not issued here, or was changed.";
pub const NO_CLIENT: &str = "The sign-in request names no client.";
pub const WRONG_REDIRECT: &str = "The sign-in request would send you back to a place the assistant did \
not register, so it is not followed.";
pub const NOT_CODE: &str = "The assistant asked for something other than a sign-in code \
(response_type=code), which is all this server gives.";
pub const NO_PKCE: &str = "The assistant's sign-in request has no PKCE S256 challenge, which this \
server requires.";
pub const OTHER_RESOURCE: &str = "The assistant asked to sign in for another resource than this \
server's MCP URL.";
pub const FORM_SPENT: &str = "This form was sent already. Each sign-in form is used once.";
pub const FORM_NOT_OURS: &str = "This form is not one this server gave this browser, or it has expired \
(a sign-in form lasts ten minutes).";
pub const CROSS_SITE: &str = "This form was sent from another site. Only this server's own page can \
send it.";
pub const NOT_A_KEY_OR_LINK: &str = "That is neither an integration key (lfk_ followed by letters and \
digits) nor a key link (https://…/link#claim=…&pin=…).";
pub const LINK_FOR_ANOTHER_STACK: &str = "That key link is for another stack than the one this server \
serves. Nothing was claimed.";
pub const LINK_SPENT: &str = "That key link was used already: each key link is used once. Ask the \
stack for a new one.";
pub const LINK_EXPIRED: &str = "That key link has expired. Ask the stack for a new one.";
pub const LINK_UNKNOWN: &str = "The stack does not know that key link. Check it, or ask the stack for \
a new one.";
pub const LINK_NOT_CLAIMED: &str = "The stack could not be reached to use that key link; it was not \
used. Try again shortly.";
pub const LINK_MAYBE_SPENT: &str = "That key link was sent to the stack, but no key came back, so the \
stack may have used it up. Try the link again; if it is said to be used already, ask the stack for a new \
one.";
pub const TOO_MANY_KEYS: &str = "Too many keys have been tried from this address. Wait a minute and try \
again.";
pub const TOO_MANY_SIGN_INS: &str = "Too many sign-ins have been started from this address. Wait a \
minute and start again from your assistant.";
pub const KEY_REFUSED: &str = "The stack refused this key: it is wrong, revoked, or unknown to the \
stack. Make a new key on the stack and try again.";
pub const STACK_UNREACHABLE: &str = "The stack could not be reached to check this key. Try again \
shortly.";
pub const STACK_THROTTLED: &str = "The stack is turning requests away for now. Wait a minute and try \
again.";
pub const STACK_NOT_PINNED: &str = "The stack does not trust this server's connection to it, so it will \
not take the key over it. Whoever runs this server must check its settings.";
pub const NOTHING_KNOWN: &str = "The stack took the key but did not say what it may do. Try again \
shortly.";
pub const NOT_MADE: &str = "The sign-in could not be completed here. Try again.";

/// The kind of key, in a line: what it can do is said below it, item by item.
fn scope_words(scope: Scope) -> &'static str {
    match scope {
        // No key a person makes has it (keys are read, act or a member's); a stack that names
        // it for a key is taken at its word, and what that reaches is listed below.
        Scope::Operator => {
            "The stack gives this key the reach of whoever runs it: what that lets the assistant \
             change and read is below."
        }
        Scope::Read => "This is a read key: it can see how the stack is doing, and change nothing.",
        Scope::Act => "This is an act key: it can read and act.",
        Scope::Member => {
            "This is a household member's key: it sees what you have asked for and what you are \
             watching, and nothing of anyone else's."
        }
        Scope::Unsaid => "The stack did not say what kind of key this is; what it allows is below.",
        Scope::Unknown => {
            "The stack calls this key something this server does not know, so it will be offered \
             nothing but a check of its connection."
        }
    }
}

fn heading(text: &str) -> String {
    format!("<h1>{}</h1>", encode_quoted_attribute(text))
}

/// Who asks, in its own words, and where the person goes back to.
fn who(asking: &Asking) -> String {
    let name = match asking.name {
        Some(name) => format!(
            "An assistant that calls itself <span class=\"said\">“{}”</span>",
            encode_quoted_attribute(name)
        ),
        None => "An assistant that gave no name".to_owned(),
    };
    let from = asking
        .document_host
        .map(|host| format!(", described by {},", encode_quoted_attribute(host)))
        .unwrap_or_default();
    format!(
        "<div class=\"who\"><p>{name}{from} asks to use lemonfiber for you.</p>\
         <p class=\"small\">Then you go back to: {}</p></div>",
        encode_quoted_attribute(&shown_redirect(asking.redirect))
    )
}

/// Where the person goes back to, as the browser will be sent there: the URL as parsed (the
/// answer's own query aside), so a host in look-alike letters shows in its ASCII form (`xn--…`)
/// and nothing the parser drops or reorders shows as something it is not.
fn shown_redirect(redirect: &str) -> String {
    url::Url::parse(redirect).map_or_else(|_| redirect.to_owned(), String::from)
}

/// A whole page, with the headers that keep it to itself.
/// Its forms go to this server, and, once allowed or denied, on to `back_to`.
fn page(status: StatusCode, body: &str, back_to: Option<&str>) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"referrer\" content=\"same-origin\">\
         <title>lemonfiber sign-in</title><style>{STYLE}</style></head><body>{body}</body></html>"
    );
    let mut response = (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html,
    )
        .into_response();
    let policy = format!(
        "default-src 'none'; style-src {}; form-action 'self'{}; frame-ancestors 'none'; base-uri 'none'",
        *STYLE_HASH,
        back_to
            .map(|origin| format!(" {origin}"))
            .unwrap_or_default()
    );
    let headers = response.headers_mut();
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // No referrer leaves for anywhere else; this server's own forms keep their origin, which a
    // browser sends as `null` under `no-referrer`, and which tells a form of the page's own apart.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_client_says_is_shown_escaped() {
        let asking = Asking {
            name: Some("<script>alert(1)</script>\"'"),
            redirect: "https://a.example/cb?x=<b>",
            document_host: None,
        };
        let shown = who(&asking);
        assert!(!shown.contains("<script>") && !shown.contains("<b>"));
        assert!(shown.contains("&lt;script&gt;") && shown.contains("&quot;&#x27;"));
    }

    /// What the page leans on the escaper for, pinned: each character HTML gives a meaning to in
    /// text or in a quoted attribute (of either quote) as a reference, and nothing else touched.
    #[test]
    fn text_and_quoted_attributes_are_escaped_and_nothing_else_is() {
        assert_eq!(
            encode_quoted_attribute("a&b<c>d\"e'f&amp;"),
            "a&amp;b&lt;c&gt;d&quot;e&#x27;f&amp;amp;"
        );
        let plain = "lfk_… https://a.example/link#claim=x?y=1 — é";
        assert_eq!(encode_quoted_attribute(plain), plain);
        assert_eq!(heading("Tom's <b>"), "<h1>Tom&#x27;s &lt;b&gt;</h1>");
    }

    /// Issue 28: what the page says an action disturbs agrees with the contract's
    /// `x-lemonfiber-disturbs`.
    #[test]
    fn what_an_action_disturbs_agrees_with_the_contract() {
        let actions: Vec<Action> = crate::catalogue::TOOLS
            .iter()
            .filter_map(|tool| match tool.operation {
                Operation::Act(action) => Some(action),
                _ => None,
            })
            .collect();
        assert!(actions.len() >= 4, "{actions:?}");
        for action in actions {
            let said = disturbance(action);
            assert_eq!(
                said.contains("interrupts no service"),
                !action.disturbs(),
                "{action:?}: {said}"
            );
        }
    }

    /// Issue 28: how the person's yes is had, as docs/security.md's table has it for each
    /// mode: only `offer` lets silence stand; only `ask` never lets the rehearsal stand; an
    /// action with no rehearsal is named, and never said to be rehearsed.
    #[test]
    fn how_each_action_is_agreed_to_is_said_as_the_mode_decides() {
        let doctor = ["Run the doctor"];
        let offer = how_agreed(ConsentMode::Offer, &doctor, 5);
        assert!(
            offer.contains("or you do not answer, the rehearsal stands"),
            "{offer}"
        );
        assert!(
            offer.contains("“Run the doctor” runs only on your yes, or on the assistant's call")
        );
        assert!(offer.starts_with("All but “Run the doctor” are rehearsed first."));
        let both = how_agreed(ConsentMode::Both, &doctor, 5);
        assert!(
            both.contains("no answer is a no") && !both.contains("do not answer"),
            "{both}"
        );
        assert!(both.contains("only where it cannot ask you does the rehearsal stand"));
        let ask = how_agreed(ConsentMode::Ask, &doctor, 5);
        assert!(!ask.contains("stand") && !ask.contains("call"), "{ask}");
        assert!(ask.contains("nothing happens without your yes"));
        let alone = how_agreed(ConsentMode::Offer, &doctor, 1);
        assert!(
            alone.starts_with("“Run the doctor”: no rehearsal."),
            "{alone}"
        );
        let rehearsed = how_agreed(ConsentMode::Offer, &[], 2);
        assert!(rehearsed.starts_with("Each is rehearsed first.") && !rehearsed.contains("call"));
    }

    /// Issue 27, item 6: the page shows where the browser goes, not the text registered.
    #[test]
    fn the_redirect_is_shown_as_the_browser_is_sent_there() {
        assert_eq!(
            shown_redirect("https://\u{0430}pple.example/cb"),
            "https://xn--pple-43d.example/cb"
        );
        assert_eq!(
            shown_redirect("https://evil.example\\.good.example/cb"),
            "https://evil.example/.good.example/cb"
        );
        assert_eq!(
            shown_redirect("http://127.0.0.1:33418/callback"),
            "http://127.0.0.1:33418/callback"
        );
    }
}
