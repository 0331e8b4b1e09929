//! The MCP server: the tools and resources a key is offered, made from the catalogue by hand
//! (no macros), answering through the stack and handing its answers over as data.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, DiscoverResult, GetPromptRequestParams, GetPromptResponse, InputRequiredResult,
    InputResponses, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestMetaObject, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::{CancellationToken, DropGuard};

mod listening;

use super::arguments;
use super::asking::{self, ANSWER_WITHIN, Asked};
use super::audit::{self, Decision};
use super::completions;
use super::notices::{Notices, Severity};
use super::prompts;
use super::question;
use super::reach::{Reach, SessionReach, SessionsBegun};
use super::versions::{
    self, KNOWN_METHODS, PROTOCOL_VERSIONS, name_the_server, name_the_server_on,
    resource_not_found, this_server,
};
use super::watches::{self, Tell, Watch, WatchCount, Watches};
use crate::access::consent::{self, AskedAbout, Consent, NoConsent, OfferRefused, Seal};
use crate::access::offer::{self, Offer};
use crate::access::plan;
use crate::access::standing::{self, Position, SharedStanding};
use crate::answer::outcome::{self, Answer, Handover, ToolAnswer};
use crate::answer::sentences::{self, Via};
use crate::catalogue::{self, Action, Audience, OFFER_ARGUMENT, Operation, ToolSpec};
use crate::config::Conduct;
use crate::stack::jobs;
use crate::stack::parameters::Parameters;
use crate::stack::{Failure, Refusal, Reply, Scope, Stack};

/// What every session of the server shares, whichever key it serves: how it deals with the stack
/// and the assistant, the seal its offers are made with, and the watches every key holds.
#[derive(Debug)]
pub struct Common {
    pub conduct: Conduct,
    pub seal: Seal,
    watch_count: Arc<WatchCount>,
}

impl Common {
    pub fn new(conduct: Conduct, seal: Seal) -> Common {
        Common {
            conduct,
            seal,
            watch_count: Arc::default(),
        }
    }
}

pub struct LemonfiberServer {
    stack: Arc<Stack>,
    via: Via,
    standing: SharedStanding,
    common: Arc<Common>,
    notices: Notices,
    watches: Watches,
    /// Cancelled when the session this handler serves ends, so what it started for the session
    /// ends with it.
    session_ends: CancellationToken,
    _ends_with_the_session: DropGuard,
    /// Told when the session begins, over HTTP.
    sessions_begun: Option<Arc<dyn SessionsBegun>>,
}

/// The audit's word for a call refused for its arguments, which a resource read also answers as
/// invalid params.
const ARGUMENTS_REFUSED: &str = "arguments";

/// Who a call is for: the client, the progress token it gave (if any), whether it has cancelled
/// the request, and how its person can be asked.
pub struct Caller {
    reach: Reach,
    progress: Option<ProgressToken>,
    cancelled: CancellationToken,
    /// Whether the client declared that it can put a question to its person.
    can_ask: bool,
    /// Whether the request speaks 2026-07-28 or later, where a call cannot wait on the client.
    stateless: bool,
    /// On 2026-07-28, the question handed out before (sealed) and the client's answers to it.
    answer: Option<(String, InputResponses)>,
    /// Where the request came from, over HTTP.
    client: Option<std::net::IpAddr>,
}

impl Caller {
    fn of(context: &RequestContext<RoleServer>) -> Caller {
        Caller {
            reach: Reach::Peer(context.peer.clone()),
            progress: context.meta.get_progress_token(),
            cancelled: context.ct.clone(),
            can_ask: asking::can_ask(context.client_capabilities()),
            stateless: versions::stateless(context.protocol_version()),
            answer: None,
            client: context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|request| request.extensions.get::<audit::ClientAddress>())
                .map(|&audit::ClientAddress(address)| address),
        }
    }

    /// The caller of a stateless request the server serves itself, which says everything of
    /// itself in its `meta` and is reached by its own response.
    pub fn stateless(
        meta: &RequestMetaObject,
        client: Option<std::net::IpAddr>,
        reach: Reach,
        cancelled: CancellationToken,
    ) -> Caller {
        Caller {
            reach,
            progress: meta.get_progress_token(),
            cancelled,
            can_ask: asking::can_ask(meta.client_capabilities()),
            stateless: true,
            answer: None,
            client,
        }
    }

    /// The caller of a request of a session's that the server serves itself: the session's
    /// client, as the library's peer knows it, unless the request's `meta` says otherwise.
    pub fn in_session(
        reach: &SessionReach,
        meta: &RequestMetaObject,
        client: Option<std::net::IpAddr>,
        cancelled: CancellationToken,
    ) -> Caller {
        let declared = reach.peer.peer_info().map(|info| info.capabilities.clone());
        Caller {
            reach: Reach::Peer(reach.peer.clone()),
            progress: meta.get_progress_token(),
            cancelled,
            can_ask: asking::can_ask(meta.client_capabilities().or(declared)),
            stateless: false,
            answer: None,
            client,
        }
    }

    /// Whether this call puts a question: it can ask, and brings back no answer (2026-07-28).
    fn puts_question(&self) -> bool {
        self.can_ask && !(self.stateless && self.answer.is_some())
    }

    /// The caller of a tool, with the answers its call brings back, if any.
    fn calling(self, request: &mut CallToolRequestParams) -> Caller {
        let answer = request
            .request_state
            .take()
            .map(|question| (question, request.input_responses.take().unwrap_or_default()));
        Caller { answer, ..self }
    }
}

/// Where asking the person stands.
enum Asking {
    /// What came of asking, and the sealed question the answer was brought back on, if it was.
    Answered(Asked, Option<AskedAbout>),
    /// On 2026-07-28: the question, for the client to put and bring back answered.
    Pending(InputRequiredResult),
}

/// How a call was decided, beside the answer it framed.
#[derive(Clone, Copy)]
struct Decided {
    decision: Decision,
    status: Option<u16>,
}

/// What one call came to: the answer, and what the audit line says of it.
struct Ran {
    answer: Answer,
    decision: Decision,
    status: Option<u16>,
    scope: Scope,
    audience: Audience,
    consent: Option<Consent>,
    /// The person's answer, required before the call can go on (2026-07-28).
    pending: Option<InputRequiredResult>,
}

/// What one call came to, as the handler hands it over.
struct Called {
    framed: outcome::Framed,
    decided: Decided,
    pending: Option<InputRequiredResult>,
}

impl Ran {
    fn refused(answer: Answer, why: &'static str) -> Ran {
        Ran::decided(answer, Decision::RefusedBeforeStack(why))
    }

    fn decided(answer: Answer, decision: Decision) -> Ran {
        Ran {
            answer,
            decision,
            status: None,
            scope: Scope::Unsaid,
            audience: Audience::Operator,
            consent: None,
            pending: None,
        }
    }

    /// A call waiting for the person's answer, which the client brings back in its next call.
    fn pending(question: InputRequiredResult) -> Ran {
        Ran {
            pending: Some(question),
            ..Ran::decided(outcome::awaiting_person(), Decision::AwaitingPerson)
        }
    }

    /// The connection tool, answered from what the server knows.
    fn connected(offer: &Offer) -> Ran {
        Ran::decided(
            outcome::connected(offer.scope()),
            Decision::AnsweredByServer,
        )
    }

    fn sent(answer: Answer, status: Option<u16>) -> Ran {
        Ran {
            status,
            ..Ran::decided(answer, Decision::Sent)
        }
    }
}

/// The words the audit line gives an offer's refusal.
fn offer_refusal_word(why: OfferRefused) -> &'static str {
    match why {
        OfferRefused::NotSealedHere => "offer-not-sealed-here",
        OfferRefused::OtherKey => "offer-of-another-key",
        OfferRefused::OtherAction => "offer-of-another-action",
        OfferRefused::Expired => "offer-expired",
        OfferRefused::Spent => "offer-spent",
        OfferRefused::NotRecorded => "offer-not-recorded",
    }
}

impl LemonfiberServer {
    pub fn new(
        stack: Arc<Stack>,
        standing: SharedStanding,
        common: Arc<Common>,
        via: Via,
    ) -> LemonfiberServer {
        let session_ends = CancellationToken::new();
        LemonfiberServer {
            stack,
            via,
            standing,
            common,
            notices: Notices::default(),
            watches: Watches::default(),
            _ends_with_the_session: session_ends.clone().drop_guard(),
            session_ends,
            sessions_begun: None,
        }
    }

    /// This handler, telling `sessions` of the session it serves once its client has said it
    /// is initialized.
    pub fn telling(mut self, sessions: Arc<dyn SessionsBegun>) -> LemonfiberServer {
        self.sessions_begun = Some(sessions);
        self
    }

    /// This handler, for a call of the session reached by `reach`: its notices are the
    /// session's.
    pub fn in_session(mut self, reach: &SessionReach) -> LemonfiberServer {
        self.notices = reach.notices.clone();
        self
    }

    /// A `tools/call` for `caller`, speaking `version`: however the request reached the server,
    /// this is the one way a tool is called.
    pub async fn call_tool_for(
        &self,
        mut request: CallToolRequestParams,
        caller: Caller,
        version: Option<ProtocolVersion>,
    ) -> Result<ToolAnswer, McpError> {
        let Some(tool) = catalogue::find(&request.name) else {
            return Err(McpError::invalid_params(sentences::no_such_tool(), None));
        };
        let uri = tool.resource_of(request.arguments.as_ref());
        let caller = caller.calling(&mut request);
        let called = self.call(tool, request.arguments, "tool", &caller).await;
        if let Some(mut question) = called.pending {
            name_the_server_on(&mut question.meta, version);
            return Ok(ToolAnswer {
                response: question.into(),
                structured: None,
            });
        }
        let mut answer = called.framed.into_tool_result(&uri);
        if let CallToolResponse::Complete(result) = &mut answer.response {
            name_the_server_on(&mut result.meta, version);
        }
        Ok(answer)
    }

    /// A watch of the resource at `uri`, told through `tell`: only a resource of a read this key
    /// is offered, at a path the read takes.
    async fn watch_of(
        &self,
        uri: &str,
        tell: Tell,
        context: &RequestContext<RoleServer>,
    ) -> Result<Watch, McpError> {
        let version = context.protocol_version();
        let found = catalogue::reads().find_map(|tool| match tool.operation {
            Operation::Read(read) => Some((tool, read, tool.match_resource(uri)?)),
            _ => None,
        });
        let Some((tool, read, path_values)) = found else {
            return Err(resource_not_found(
                uri,
                sentences::no_such_resource(),
                version,
            ));
        };
        let named = Some(json!({ "uri": uri }));
        let offer = match self.position(Some(&context.peer)).await {
            Position::Connected(offer) => offer,
            Position::Refused(_) => {
                return Err(McpError::invalid_request(
                    sentences::key_refused(self.via),
                    named,
                ));
            }
            Position::Unreachable(..) => {
                return Err(McpError::internal_error(
                    sentences::notice_unreachable(),
                    named,
                ));
            }
        };
        if !offer.admits(tool) {
            return Err(McpError::invalid_params(
                sentences::not_offered(tool.name),
                named,
            ));
        }
        let arguments = arguments::check(tool.parameters_for(offer.audience), Some(path_values))
            .map_err(|problem| {
                McpError::invalid_params(sentences::argument(&problem, tool.name), named.clone())
            })?;
        Ok(Watch {
            uri: uri.to_owned(),
            read,
            arguments,
            stack: self.stack.clone(),
            standing: self.standing.clone(),
            every: self.common.conduct.watch_every,
            tell,
        })
    }

    /// Starts a watch, or says why not.
    fn start_watch(&self, watch: Watch, until: Option<CancellationToken>) -> Result<(), McpError> {
        let uri = watch.uri.clone();
        self.watches
            .start(watch, &self.common.watch_count, until)
            .map_err(|watches::NotWatched::TooMany| {
                McpError::invalid_request(
                    sentences::too_many_watches(watches::PER_KEY, watches::IN_ALL),
                    Some(json!({ "uri": uri })),
                )
            })
    }

    /// Where the server stands for this key, reading the capabilities again when they are stale
    /// (never for a refused key). Tells the client when what it is offered has changed, which can
    /// only happen when they are read.
    async fn position(&self, peer: Option<&Peer<RoleServer>>) -> Position {
        let mut standing = self.standing.lock().await;
        let read_now = standing.needs_reading();
        if read_now {
            let read = self.stack.capabilities().await;
            if let Err(failure) = &read {
                tracing::info!(
                    failure = failure_name(failure),
                    "the stack's capabilities could not be read"
                );
            }
            let unreachable = matches!(read, Err(Failure::Unreachable(_)));
            standing.record(read);
            if unreachable && let Some(peer) = peer {
                let said = sentences::notice_unreachable();
                self.notices.tell(peer, Severity::Warning, said).await;
            }
        }
        let position = standing.position();
        // Capabilities read before any session (as the HTTP mode's key check reads them) are
        // noted as offered the first time they are used, so a later change is told.
        if !read_now && standing.offer_noted() {
            return position;
        }
        let offered = listed(&position)
            .iter()
            .map(|tool| format!("{}\n{:?}", tool.name, tool.description))
            .collect();
        // A change is told to every session and listening stream of the key by `tell_changes`
        // and `listen`, from the standing's own word, wherever the change was learned.
        if standing.note_offered(offered) {
            tracing::info!("what this key is offered has changed");
        }
        position
    }

    /// Runs one tool and hands its answer over, with an audit line of what happened and how it
    /// was decided.
    async fn call(
        &self,
        tool: &'static ToolSpec,
        given: Option<JsonObject>,
        event: &'static str,
        caller: &Caller,
    ) -> Called {
        let started = Instant::now();
        // The run's state (the stack's request, the answer, the question) is many kilobytes; on
        // the heap, the MCP library's tasks move a pointer to it rather than copying it each
        // time they are spawned and started.
        let ran = Box::pin(self.run(tool, given, caller)).await;
        audit::record(&audit::Entry {
            key_digest: &self.stack.key_digest(),
            scope: ran.scope.word(),
            client: caller.client,
            event,
            tool: tool.name,
            decision: ran.decision,
            status: ran.status,
            consent: ran.consent.map(Consent::word),
            took: started.elapsed(),
        });
        let narrowing = match tool.operation {
            Operation::Read(_) => tool.narrowing(ran.audience),
            _ => Vec::new(),
        };
        let decided = Decided {
            decision: ran.decision,
            status: ran.status,
        };
        let framed = ran.answer.framed(&Handover {
            result_limit: self.common.conduct.result_limit,
            withheld: self.stack.withheld(),
            narrowing: &narrowing,
        });
        Called {
            framed,
            decided,
            pending: ran.pending,
        }
    }

    /// Runs one tool: where the server stands, the offer, the arguments, then the stack. Nothing
    /// reaches the stack for a refused key, a tool this key is not offered, arguments the tool
    /// does not take, or an action without a sealed offer that is the person's yes (F13-R4).
    async fn run(
        &self,
        tool: &'static ToolSpec,
        given: Option<JsonObject>,
        caller: &Caller,
    ) -> Ran {
        let offer = match self.position(caller.reach.peer()).await {
            Position::Refused(_) => {
                return Ran::refused(outcome::key_refused(self.via), "key-refused");
            }
            Position::Unreachable(failure, _) => {
                return Ran::refused(outcome::failure(&failure, &[]), "stack-unreachable");
            }
            Position::Connected(offer) => offer,
        };
        let ran = self.run_offered(tool, given, &offer, caller).await;
        Ran {
            scope: offer.scope(),
            audience: offer.audience,
            ..ran
        }
    }

    async fn run_offered(
        &self,
        tool: &'static ToolSpec,
        given: Option<JsonObject>,
        offer: &Offer,
        caller: &Caller,
    ) -> Ran {
        if tool.operation == Operation::Connection {
            return Ran::connected(offer);
        }
        if !offer.admits(tool) {
            return Ran::decided(outcome::not_offered(tool.name), Decision::NotOffered);
        }
        if let Operation::Act(action) = tool.operation
            && let Some(rehearsal) = action.rehearsal_tool()
            && lacks_an_offer(given.as_ref())
        {
            return Ran::refused(outcome::rehearse_first(tool.name, rehearsal), "no-offer");
        }
        let arguments = match arguments::check(tool.parameters_for(offer.audience), given) {
            Ok(arguments) => arguments,
            Err(problem) => {
                return Ran::refused(
                    outcome::argument_refused(&problem, tool.name),
                    ARGUMENTS_REFUSED,
                );
            }
        };
        let mut consent = None;
        let answered = match tool.operation {
            Operation::Read(read) => self
                .stack
                .read(read, &arguments)
                .await
                .map(|reply| (reply.status, outcome::answer(tool.name, reply))),
            Operation::Rehearse(action) => self.rehearse(tool, action, &arguments).await,
            Operation::Act(action) => {
                let consented = match self
                    .consented(tool, action, &arguments, offer, caller)
                    .await
                {
                    Ok(consented) => consented,
                    Err(refused) => return refused,
                };
                consent = consented.consent;
                self.act(tool, action, consented, caller).await.map(
                    |(status, answer)| match consent {
                        Some(consent) => (status, answer.consented(consent)),
                        None => (status, answer),
                    },
                )
            }
            Operation::Job => {
                let job = arguments.text("job").unwrap_or_default();
                jobs::ask(&self.stack, &job)
                    .await
                    .map(|(status, state)| (status, outcome::job(&job, state, None)))
            }
            Operation::Connection => return Ran::connected(offer),
        };
        match answered {
            Ok((status, answer)) => Ran {
                consent,
                ..Ran::sent(answer, Some(status))
            },
            Err(Failure::PathOutsideTemplate) => Ran::refused(
                outcome::failure(&Failure::PathOutsideTemplate, &[]),
                "path-outside-template",
            ),
            Err(failure) => {
                let status = status_of(&failure);
                let narrowing = tool.narrowing(offer.audience);
                Ran::sent(
                    self.failed(tool, failure, &narrowing, caller.reach.peer())
                        .await,
                    status,
                )
            }
        }
    }

    /// What a failed call says, and what it changes: a refused key is refused for good; a scope
    /// that does not reach means the capabilities are read again (and the client told).
    async fn failed(
        &self,
        tool: &ToolSpec,
        failure: Failure,
        narrowing: &[&str],
        peer: Option<&Peer<RoleServer>>,
    ) -> Answer {
        tracing::info!(
            tool = tool.name,
            failure = failure_name(&failure),
            "the stack did not answer the tool"
        );
        if let Failure::Refused(refusal) = &failure {
            if standing::refuses_the_key(refusal) {
                self.standing.lock().await.refuse();
                return outcome::key_refused(self.via);
            }
            if standing::out_of_scope(refusal) {
                self.standing.lock().await.forget_capabilities();
                self.position(peer).await;
            }
        }
        outcome::failure(&failure, narrowing)
    }

    /// Rehearses, and seals the stack's offer with what was rehearsed, for this key and action.
    async fn rehearse(
        &self,
        tool: &ToolSpec,
        action: Action,
        arguments: &Parameters,
    ) -> Result<(u16, Answer), Failure> {
        let rehearsed = arguments.to_body();
        let reply = self.stack.rehearse(action, rehearsed.clone()).await?;
        let sealed = outcome::stack_offer(&reply).and_then(|stack_offer| {
            self.common.seal.seal(
                &self.stack.key_digest(),
                action.act_tool(),
                &rehearsed,
                &stack_offer,
                &plan::digest(&reply),
            )
        });
        let status = reply.status;
        Ok((
            status,
            outcome::rehearsed(tool.name, action.act_tool(), reply, sealed.as_deref()),
        ))
    }

    /// The body an act is sent with, its `Idempotency-Key`, and the person's yes. For an action
    /// that is rehearsed: the offer opened for this key and action; where the client can ask, the
    /// plan rehearsed again and, only if it has not moved, the person asked about it; the offer
    /// spent before anything is sent, with the sealed arguments, the stack's offer (the fresh one,
    /// made on the plan the person was asked about, where there is one) and `confirm`, under the
    /// offer's key. For an action with no rehearsal that disturbs the stack, the person is asked
    /// about the arguments as given, with no offer to stand for their yes. Otherwise the arguments
    /// as given, under a fresh key. Refused, it says why in the call's answer.
    async fn consented(
        &self,
        tool: &ToolSpec,
        action: Action,
        arguments: &Parameters,
        offer: &Offer,
        caller: &Caller,
    ) -> Result<Consented, Ran> {
        let seal = &self.common.seal;
        let Some(rehearsal) = action.rehearsal_tool() else {
            let body = arguments.to_body();
            let consent = if action.disturbs() {
                let about = serde_json::to_string(&body).unwrap_or_default();
                let message = if caller.puts_question() {
                    Some(question::put(&self.stack, tool, action, &body, None, offer).await)
                } else {
                    None
                };
                let consent = self.agreed(tool, &about, message, caller, false).await?;
                Some(consent)
            } else {
                None
            };
            return Ok(Consented {
                body,
                idempotency_key: consent::fresh_idempotency_key(),
                consent,
            });
        };
        let offer_refused = |why| {
            Ran::refused(
                outcome::offer_refused(tool.name, rehearsal, why),
                offer_refusal_word(why),
            )
        };
        let sealed_offer = arguments.text(OFFER_ARGUMENT).unwrap_or_default();
        let opened = seal
            .open(&sealed_offer, &self.stack.key_digest(), tool.name)
            .map_err(offer_refused)?;
        let (message, fresh_offer) = if caller.can_ask {
            let fresh = self
                .rehearsed_again(tool, action, rehearsal, &opened, caller)
                .await?;
            let message = if caller.puts_question() {
                let arguments = &opened.arguments;
                let fresh = Some(&fresh);
                Some(question::put(&self.stack, tool, action, arguments, fresh, offer).await)
            } else {
                None
            };
            (message, outcome::stack_offer(&fresh))
        } else {
            (None, None)
        };
        let consent = self
            .agreed(tool, &sealed_offer, message, caller, true)
            .await
            .map_err(|refused| {
                // A no is final: the offer is spent, and acting takes a new rehearsal.
                if refused.no.is_some_and(NoConsent::is_final) {
                    let _ = seal.spend(&opened);
                }
                refused.ran
            })?;
        seal.spend(&opened).map_err(offer_refused)?;
        let idempotency_key = Some(opened.idempotency_key());
        let mut body = opened.arguments;
        let stack_offer = fresh_offer.unwrap_or(opened.stack_offer);
        body.insert(OFFER_ARGUMENT.to_owned(), Value::from(stack_offer));
        if let Some(confirm) = arguments.flag("confirm") {
            body.insert("confirm".to_owned(), Value::Bool(confirm));
        }
        Ok(Consented {
            body,
            idempotency_key,
            consent: Some(consent),
        })
    }

    /// An opened offer's arguments rehearsed again (which writes nothing): the fresh report, if
    /// its plan is the one the offer was made on; else the call ends, no one asked.
    async fn rehearsed_again(
        &self,
        tool: &ToolSpec,
        action: Action,
        rehearsal: &str,
        opened: &consent::Opened,
        caller: &Caller,
    ) -> Result<Reply, Ran> {
        let fresh = match self.stack.rehearse(action, opened.arguments.clone()).await {
            Ok(fresh) => fresh,
            Err(failure) => {
                let status = status_of(&failure);
                let answer = self.failed(tool, failure, &[], caller.reach.peer()).await;
                return Err(Ran::sent(answer, status));
            }
        };
        if plan::digest(&fresh) == opened.plan {
            return Ok(fresh);
        }
        Err(Ran::refused(
            outcome::plan_moved(tool.name, rehearsal, fresh),
            "plan-moved",
        ))
    }

    /// The person's yes to acting with `tool` on `about` (the sealed offer, or the arguments of an
    /// action with no offer), as the settings' consent mode decides from what came of asking; a
    /// yes brought back on a sealed question is taken once.
    async fn agreed(
        &self,
        tool: &ToolSpec,
        about: &str,
        message: Option<String>,
        caller: &Caller,
        offered: bool,
    ) -> Result<Consent, Refused> {
        let (asked, answered) = match self.ask(tool, about, message, caller).await {
            Asking::Answered(asked, answered) => (asked, answered),
            Asking::Pending(question) => {
                return Err(Refused {
                    no: None,
                    ran: Ran::pending(question),
                });
            }
        };
        let refused = |no: NoConsent| {
            let rehearsal = match tool.operation {
                Operation::Act(action) => action.rehearsal_tool(),
                _ => None,
            };
            Refused {
                no: Some(no),
                ran: Ran::refused(outcome::no_consent(tool.name, rehearsal, no), no.word()),
            }
        };
        let consent =
            asking::decide(self.common.conduct.consent, asked, offered).map_err(refused)?;
        if let Some(answered) = answered {
            self.common.seal.spend_answer(&answered).map_err(refused)?;
        }
        Ok(consent)
    }

    /// Asks the person whether to act with `tool` on `about`, as the client can be asked: while
    /// the call waits in a session; on 2026-07-28 by handing the question out, and taking the
    /// answer the client brings back only with the question sealed for this key, action and
    /// subject.
    async fn ask(
        &self,
        tool: &ToolSpec,
        about: &str,
        message: Option<String>,
        caller: &Caller,
    ) -> Asking {
        if !caller.can_ask {
            return Asking::Answered(Asked::CannotAsk, None);
        }
        // Made whenever `puts_question` says the question is put, so never left empty here.
        let message = message.unwrap_or_default();
        let field = sentences::consent_field();
        // A caller that is not stateless is always one of the library's, reached by its peer.
        if !caller.stateless
            && let Some(peer) = caller.reach.peer()
        {
            let asked = asking::ask_now(peer, message, field, &caller.cancelled).await;
            return Asking::Answered(asked, None);
        }
        let key = self.stack.key_digest();
        let seal = &self.common.seal;
        match &caller.answer {
            Some((question, responses)) => match seal.asked(question, &key, tool.name, about) {
                Some(answered) => Asking::Answered(asking::answered(responses), Some(answered)),
                None => Asking::Answered(Asked::Unmatched, None),
            },
            None => match seal.question(&key, tool.name, about, ANSWER_WITHIN) {
                Some(question) => Asking::Pending(InputRequiredResult::new(
                    Some(asking::input_requests(message, field)),
                    Some(question),
                )),
                None => Asking::Answered(Asked::NoAnswer, None),
            },
        }
    }

    /// Acts once, never again on its own: a stale offer is said as such, and a job the action
    /// started is followed for a while.
    async fn act(
        &self,
        tool: &ToolSpec,
        action: Action,
        consented: Consented,
        caller: &Caller,
    ) -> Result<(u16, Answer), Failure> {
        let Consented {
            body,
            idempotency_key,
            ..
        } = consented;
        let reply = match self
            .stack
            .act(action, body, idempotency_key.as_deref())
            .await
        {
            Ok(reply) => reply,
            Err(Failure::Refused(refusal)) if is_stale(action, &refusal) => {
                let rehearsal = action.rehearsal_tool().unwrap_or(tool.name);
                return Ok((
                    refusal.status,
                    outcome::stale(tool.name, rehearsal, &refusal),
                ));
            }
            Err(failure) => return Err(failure),
        };
        tracing::info!(
            tool = tool.name,
            status = reply.status,
            "the stack took the action"
        );
        let status = reply.status;
        Ok((status, self.follow(tool, reply, caller).await))
    }

    /// Follows the job an action started, if it did, for as long as the settings say: telling a
    /// caller that asked for progress each time it is still running, and stopping (the job goes
    /// on) when the caller cancels its request.
    async fn follow(&self, tool: &ToolSpec, reply: Reply, caller: &Caller) -> Answer {
        let Some(job) = jobs::started(&reply) else {
            return outcome::acted(tool.name, reply);
        };
        let started = Instant::now();
        let still_running = |looks: u32| {
            let progress = caller.progress.clone().map(|token| {
                let mut progress = ProgressNotificationParam::new(token, f64::from(looks));
                progress.message = Some(sentences::job_in_progress(
                    tool.name,
                    started.elapsed().as_secs(),
                ));
                progress
            });
            let reach = caller.reach.clone();
            async move {
                if let Some(progress) = progress {
                    reach.notify_progress(progress).await;
                }
            }
        };
        let followed = jobs::follow(
            &self.stack,
            &job,
            self.common.conduct.job_wait,
            &caller.cancelled,
            still_running,
        )
        .await;
        if caller.cancelled.is_cancelled() {
            tracing::info!(
                tool = tool.name,
                "the request was cancelled: the job is no longer followed, and goes on"
            );
        }
        match followed {
            Ok(state) => outcome::job(&job, state, Some((tool.name, started.elapsed()))),
            Err(failure) => {
                tracing::info!(
                    tool = tool.name,
                    failure = failure_name(&failure),
                    "the job could not be followed"
                );
                outcome::job_not_followed(tool.name, reply)
            }
        }
    }
}

/// Why acting did not go ahead, and the call's answer: no yes (`no`), or, on 2026-07-28, the
/// question handed out first (`no` is `None`).
struct Refused {
    no: Option<NoConsent>,
    ran: Ran,
}

impl From<Refused> for Ran {
    fn from(refused: Refused) -> Ran {
        refused.ran
    }
}

/// What an act is sent with once the person's consent is checked.
struct Consented {
    body: serde_json::Map<String, Value>,
    /// `None` only where no randomness could be had for a fresh key: the act is then sent as
    /// every other client sends it, without one.
    idempotency_key: Option<String>,
    /// How the person's yes was had, for an action that is rehearsed.
    consent: Option<Consent>,
}

/// The tools listed in a position: what the key is offered, or, before the stack has ever
/// answered, the connection tool alone.
fn listed(position: &Position) -> Vec<Tool> {
    match position.offered() {
        Some(offer) => offer.listed_tools(),
        None => offer::before_the_stack_answers(),
    }
}

/// Whether an act tool was called with no offer at all (left out, null or blank): the one thing
/// the server asks of an action before anything else. An offer of the wrong type is left to the
/// argument check, which says so.
fn lacks_an_offer(given: Option<&JsonObject>) -> bool {
    match given.and_then(|given| given.get(OFFER_ARGUMENT)) {
        None | Some(Value::Null) => true,
        Some(Value::String(offer)) => offer.trim().is_empty(),
        Some(_) => false,
    }
}

fn is_stale(action: Action, refusal: &Refusal) -> bool {
    action.stale_offer().is_some_and(|stale| refusal.is(stale))
}

/// A resource read that came to an error, in the codes of the protocol version spoken: what was
/// not offered to the key, or asked with a value the read does not take, is the caller's to
/// change (invalid params); what the stack says is not there is a resource not found (from
/// 2026-07-28 an invalid-params error naming the resource); anything else is the server's.
fn resource_error(
    uri: &str,
    sentence: String,
    decided: Decided,
    version: Option<ProtocolVersion>,
) -> McpError {
    let named = Some(json!({ "uri": uri }));
    match decided {
        Decided {
            decision: Decision::NotOffered | Decision::RefusedBeforeStack(ARGUMENTS_REFUSED),
            ..
        } => McpError::invalid_params(sentence, named),
        Decided {
            status: Some(404), ..
        } => resource_not_found(uri, sentence, version),
        _ => McpError::internal_error(sentence, None),
    }
}

/// The HTTP status the stack answered a failed call with, where it answered one.
fn status_of(failure: &Failure) -> Option<u16> {
    match failure {
        Failure::Refused(refusal) => Some(refusal.status),
        Failure::Unexpected { status } => *status,
        _ => None,
    }
}

pub(super) fn failure_name(failure: &Failure) -> &'static str {
    match failure {
        Failure::PinMismatch => "pin mismatch",
        Failure::Unreachable(_) => "unreachable",
        Failure::Refused(_) => "refused",
        Failure::Unexpected { .. } => "unexpected answer",
        Failure::TooLarge { .. } => "answer too large",
        Failure::PathOutsideTemplate => "path outside its template",
    }
}

impl ServerHandler for LemonfiberServer {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let session = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|request| request.headers.get(HEADER_SESSION_ID))
            .and_then(|id| id.to_str().ok());
        if let (Some(sessions), Some(session)) = (&self.sessions_begun, session) {
            let reach = SessionReach {
                peer: context.peer.clone(),
                notices: self.notices.clone(),
            };
            sessions.begun(session, reach);
        }
        self.session_began(context.peer).await;
    }

    // Logging is deprecated from 2026-07-28 on, and served for the versions before it.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if versions::stateless(context.protocol_version()) {
            return Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                sentences::no_such_method(),
                None,
            ));
        }
        self.notices.asked(request);
        Ok(())
    }

    /// What `initialize` declares: the versions before 2026-07-28, logging among it.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(versions::capabilities(None))
            .with_server_info(this_server())
            .with_instructions(sentences::instructions())
    }

    /// What `server/discover` declares: only what the version it asks on is served.
    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        let mut info = self.get_info();
        info.capabilities = versions::capabilities(context.protocol_version());
        Ok(DiscoverResult::from_server_info(
            PROTOCOL_VERSIONS.to_vec(),
            info,
        ))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.accepted_filter(requested))
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        self.listening(subscription).await
    }

    /// A request the protocol library did not recognise: a method of the protocol whose
    /// parameters did not parse (it falls through to here), or a method no one serves.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method.as_str();
        if KNOWN_METHODS.contains(&method) && !versions::removed(method, context.protocol_version())
        {
            Err(McpError::invalid_params(
                sentences::parameters_of_the_wrong_shape(),
                None,
            ))
        } else {
            Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                sentences::no_such_method(),
                None,
            ))
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut listed =
            ListToolsResult::with_all_items(listed(&self.position(Some(&context.peer)).await));
        name_the_server(&mut listed.meta, &context);
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let version = context.protocol_version();
        let answer = self.call_tool_for(request, Caller::of(&context), version);
        answer.await.map(ToolAnswer::whole)
    }

    // Watching a resource one by one is `resources/subscribe` up to 2025-11-25, which the
    // protocol library names deprecated for the versions after.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let tell = Tell::Session(context.peer.clone());
        let watch = self.watch_of(&request.uri, tell, &context).await?;
        self.start_watch(watch, None)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.watches.stop(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let position = self.position(Some(&context.peer)).await;
        let offered = match &position {
            Position::Connected(offer) => prompts::offered(offer).map(prompts::listed).collect(),
            _ => Vec::new(),
        };
        let mut listed = ListPromptsResult::with_all_items(offered);
        name_the_server(&mut listed.meta, &context);
        Ok(listed)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let position = self.position(Some(&context.peer)).await;
        let found = match &position {
            Position::Connected(offer) => {
                prompts::offered(offer).find(|prompt| prompt.name == request.name)
            }
            _ => None,
        };
        let Some(prompt) = found else {
            return Err(McpError::invalid_params(sentences::no_such_prompt(), None));
        };
        let mut rendered =
            prompts::rendered(prompt, request.arguments.as_ref(), self.stack.withheld()).map_err(
                |fault| {
                    McpError::invalid_params(sentences::prompt_argument(prompt.name, &fault), None)
                },
            )?;
        name_the_server(&mut rendered.meta, &context);
        Ok(rendered.into())
    }

    /// Values for a prompt's argument or a resource template's parameter, from what the stack
    /// answers this key: nothing the key could not read itself, and only identifiers the door
    /// hands over unchanged (issue 27). What the key is not offered is refused (issue 29).
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let position = self.position(Some(&context.peer)).await;
        completions::complete(&self.stack, &position, &request, failure_name).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let position = self.position(Some(&context.peer)).await;
        let mut listed = ListResourcesResult::with_all_items(
            position.offered().map(Offer::resources).unwrap_or_default(),
        );
        name_the_server(&mut listed.meta, &context);
        Ok(listed)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let position = self.position(Some(&context.peer)).await;
        let mut listed = ListResourceTemplatesResult::with_all_items(
            position
                .offered()
                .map(Offer::resource_templates)
                .unwrap_or_default(),
        );
        name_the_server(&mut listed.meta, &context);
        Ok(listed)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let found =
            catalogue::reads().find_map(|tool| Some((tool, tool.match_resource(&request.uri)?)));
        let Some((tool, path_values)) = found else {
            return Err(resource_not_found(
                &request.uri,
                sentences::no_such_resource(),
                context.protocol_version(),
            ));
        };
        let Called {
            framed, decided, ..
        } = self
            .call(tool, Some(path_values), "resource", &Caller::of(&context))
            .await;
        // An error carries the server's sentence only: JSON-RPC errors are logged by clients
        // and proxies, where the stack's data must not go.
        if framed.is_error {
            return Err(resource_error(
                &request.uri,
                framed.sentence,
                decided,
                context.protocol_version(),
            ));
        }
        let mut read = ReadResourceResult::new(framed.into_resource_contents(&request.uri));
        name_the_server(&mut read.meta, &context);
        Ok(read.into())
    }
}
