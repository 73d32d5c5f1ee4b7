// Package agents is what AI agents may do in a store, and how they are let in. It answers two
// namespaces of the CMS interface at the origin:
//
//   - cms-abilities/v1, WordPress's Abilities API: the registry of abilities (Registry, Builtin),
//     each a named thing to do with JSON Schemas of its input and output, listed, described and
//     run by staff users with their application passwords;
//   - agent/v1, agent sessions: a staff user connects an agent (POST /agent/v1/connect) and gets
//     a session token (vas_…) granting some abilities for a while; the agent runs them
//     (POST /agent/v1/execute) under a per-session rate limit, with request ids that make writes
//     safe to retry, and reads what it did (GET /agent/v1/status).
//
// # Invariants
//
//   - An ability runs as its user, through the origin's own routes in-process (Run, over
//     handler.Dispatcher): every route's validation and permission checks apply, so an ability
//     never does more than its user may. A session grants abilities, never capabilities: each
//     run is checked against the user as the user is at that moment.
//   - An input is validated against the ability's JSON Schema before anything runs, and an
//     output against its output schema before it is answered; the schemas are compiled once.
//   - A session token exists only in the answer that made it: the database holds its keyed hash
//     (HMAC-SHA256 with the server secret). A session ends when it expires, or at once when the
//     application password it was connected with is revoked.
//   - A write run through a session carries a request id and is claimed (session, request id)
//     before it runs: a retry or a concurrent twin never runs it again, but replays its answer;
//     a claim whose run was cut off (its origin died) answers agent_outcome_unknown, never runs.
//   - Every execute call naming a session, refused or not, is audited.
//   - No handler keeps a *fasthttp.RequestCtx after it returns.
package agents
