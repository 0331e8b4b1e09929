//! The question put to the person before an action. It is the one sentence that names what the
//! stack names: each name cleaned, short and in quotes the question says are the stack's.

/// Names the stack gave, each already cleaned and shortened: the first few, and how many more.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    pub shown: Vec<String>,
    pub more: usize,
}

impl Named {
    fn total(&self) -> usize {
        self.shown.len() + self.more
    }
}

/// How long what an action touches is down, by the stack's own bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownFor {
    UpTo(u64),
    /// Stopping waits for downloads to finish; starting again takes up to the seconds, if known.
    AfterDownloads(Option<u64>),
    /// The stack's bounds could not be read.
    Untold,
}

/// One service's update, in the stack's words: from one version to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionChange {
    pub service: String,
    pub from: String,
    pub to: String,
    /// The stack says it cannot be gone back from.
    pub for_good: bool,
}

/// What an action will do, as the fresh rehearsal's report (or, with no rehearsal, the arguments)
/// says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Restart {
        /// Nothing was narrowed, so every service restarts.
        every: bool,
        services: Named,
    },
    Update {
        changes: Vec<VersionChange>,
        more: usize,
        /// Updates the stack says it will not apply.
        held_back: usize,
    },
    Downloads {
        pause: bool,
        clients: Named,
        /// Every downloader is already as asked, so nothing changes.
        already: bool,
    },
    Diagnose {
        /// The one check asked for, in the assistant's words.
        only: Option<String>,
        disruptive: bool,
    },
    /// A report this server could not read.
    Unread,
}

/// The question put to the person before an action, from facts the server gathered: the stack's
/// names in it are cleaned and shortened already, and quoted so they cannot pass for the server's.
#[derive(Debug, Clone)]
pub struct Question<'a> {
    pub title: &'a str,
    pub act: &'a str,
    pub disturbs: bool,
    pub plan: Plan,
    /// For an action that takes services down.
    pub down_for: Option<DownFor>,
    /// What is playing now, where this key can read it.
    pub playing: Option<Named>,
}

fn quoted(named: &Named) -> String {
    let mut list = named
        .shown
        .iter()
        .map(|name| format!("\u{201C}{name}\u{201D}"))
        .collect::<Vec<_>>()
        .join(", ");
    if named.more > 0 {
        list.push_str(&format!(" and {} more", named.more));
    }
    list
}

fn services(count: usize) -> String {
    if count == 1 {
        "1 service".to_owned()
    } else {
        format!("{count} services")
    }
}

fn lasting(seconds: u64) -> String {
    if seconds < 120 {
        format!("{seconds} seconds")
    } else {
        format!("{} minutes", seconds.div_ceil(60))
    }
}

pub fn consent_question(question: &Question<'_>) -> String {
    let Question { title, act, .. } = question;
    let mut said = vec![format!(
        "Your assistant asks to act on your lemonfiber media stack: {title} ({act})."
    )];
    let mut stack_words = false;
    match &question.plan {
        Plan::Restart {
            every,
            services: named,
        } => {
            stack_words |= !named.shown.is_empty();
            said.push(match (every, named.total()) {
                (true, 0) => "It restarts every service.".to_owned(),
                (true, count) => format!("It restarts every service ({count}): {}.", quoted(named)),
                (false, 0) => {
                    "It restarts no service: the stack found none of those asked for.".to_owned()
                }
                (false, count) => format!("It restarts {}: {}.", services(count), quoted(named)),
            });
        }
        Plan::Update {
            changes,
            more,
            held_back,
        } => {
            if changes.is_empty() {
                said.push("The stack has no update to apply, so nothing changes.".to_owned());
            } else {
                stack_words = true;
                let mut listed = changes
                    .iter()
                    .map(|change| {
                        let for_good = if change.for_good { " (cannot be undone)" } else { "" };
                        format!(
                            "\u{201C}{}\u{201D} from \u{201C}{}\u{201D} to \u{201C}{}\u{201D}{for_good}",
                            change.service, change.from, change.to
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                if *more > 0 {
                    listed.push_str(&format!(" and {more} more"));
                }
                said.push(format!("It updates {listed}."));
            }
            match held_back {
                0 => {}
                1 => said.push("The stack holds back 1 other update.".to_owned()),
                more => said.push(format!("The stack holds back {more} other updates.")),
            }
        }
        Plan::Downloads {
            pause,
            already: true,
            ..
        } => said.push(if *pause {
            "Downloads are already paused, so nothing changes.".to_owned()
        } else {
            "Downloads are not paused, so nothing changes.".to_owned()
        }),
        Plan::Downloads { pause, clients, .. } => {
            let verb = if *pause {
                "pauses every download"
            } else {
                "resumes every paused download"
            };
            if clients.shown.is_empty() {
                said.push(format!("It {verb}."));
            } else {
                stack_words = true;
                said.push(format!("It {verb}, in {}.", quoted(clients)));
            }
        }
        Plan::Diagnose { only, disruptive } => {
            said.push(match only {
                Some(only) => format!(
                    "It runs the doctor's check \u{201C}{only}\u{201D} (your assistant's words)."
                ),
                None => "It runs all of the doctor's checks.".to_owned(),
            });
            said.push(if *disruptive {
                "Services are briefly interrupted to test them.".to_owned()
            } else {
                "These checks interrupt nothing.".to_owned()
            });
        }
        Plan::Unread => {
            said.push("This server could not read the stack's report of what it would do: ask your assistant what it said.".to_owned());
            if question.disturbs {
                said.push(
                    "It interrupts what the services involved are doing while it happens."
                        .to_owned(),
                );
            }
        }
    }
    match question.down_for {
        Some(DownFor::UpTo(seconds)) => {
            said.push(format!(
                "Each is down for up to {}, the stack says.",
                lasting(seconds)
            ));
        }
        Some(DownFor::AfterDownloads(Some(seconds))) => said.push(format!(
            "They stop once downloads finish, then are down for up to {}, the stack says.",
            lasting(seconds)
        )),
        Some(DownFor::AfterDownloads(None)) => {
            said.push("They stop once downloads finish.".to_owned());
        }
        Some(DownFor::Untold) => {
            said.push("The stack does not say how long each is down.".to_owned())
        }
        None => {}
    }
    if !question.disturbs {
        said.push("It interrupts nothing that is playing.".to_owned());
    }
    match &question.playing {
        Some(playing) if playing.total() == 0 => said.push("Nothing is playing now.".to_owned()),
        Some(playing) => {
            stack_words = true;
            said.push(format!("Playing now: {}.", quoted(playing)));
        }
        None => {}
    }
    if stack_words {
        let other = match &question.plan {
            Plan::Diagnose { only: Some(_), .. } => "Other words",
            _ => "Words",
        };
        said.push(format!(
            "{other} in \u{201C}quotes\u{201D} are the stack's own."
        ));
    }
    said.push("It happens once, only if you agree here.".to_owned());
    said.join(" ")
}

/// The one field of the question.
pub fn consent_field() -> &'static str {
    "I agree to this action"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(plan: Plan, disturbs: bool) -> String {
        consent_question(&Question {
            title: "Pause downloads",
            act: "downloads_pause",
            disturbs,
            plan,
            down_for: None,
            playing: None,
        })
    }

    #[test]
    fn a_question_says_when_nothing_changes_and_when_its_report_could_not_be_read() {
        let already = asked(
            Plan::Downloads {
                pause: true,
                clients: Named::default(),
                already: true,
            },
            false,
        );
        assert!(already.contains("Downloads are already paused, so nothing changes."));
        assert!(!already.contains("quotes"), "no stack words: {already}");
        let unread = asked(Plan::Unread, true);
        assert!(
            unread.contains("could not read the stack's report"),
            "{unread}"
        );
        assert!(unread.contains("interrupts what the services involved are doing"));
        let held = |held_back| {
            asked(
                Plan::Update {
                    changes: Vec::new(),
                    more: 0,
                    held_back,
                },
                true,
            )
        };
        assert!(
            held(1).contains("holds back 1 other update."),
            "{}",
            held(1)
        );
        assert!(
            held(3).contains("holds back 3 other updates."),
            "{}",
            held(3)
        );
        assert!(!held(0).contains("holds back"));
    }

    #[test]
    fn the_assistants_words_are_told_apart_from_the_stacks() {
        let question = consent_question(&Question {
            title: "Run the doctor",
            act: "diagnose",
            disturbs: true,
            plan: Plan::Diagnose {
                only: Some("disk-space".to_owned()),
                disruptive: true,
            },
            down_for: None,
            playing: Some(Named {
                shown: vec!["theo: Bluey".to_owned()],
                more: 2,
            }),
        });
        assert!(question.contains("\u{201C}disk-space\u{201D} (your assistant's words)"));
        assert!(question.contains("Playing now: \u{201C}theo: Bluey\u{201D} and 2 more."));
        assert!(question.contains("Other words in \u{201C}quotes\u{201D} are the stack's own."));
    }
}
