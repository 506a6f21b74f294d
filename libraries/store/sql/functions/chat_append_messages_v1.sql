-- The append entry point of API releases before the narrow result, kept so that such a process
-- still appends while a rollout replaces it (and for the growth benchmark's plans):
-- chat_append_messages_v3 with its result widened to a column per message column, the way those
-- releases read it. `created` carries room_id, seq, message_id and created_at (the rest NULL),
-- `replayed` the stored message's columns with a NULL outbox_id, `sealed` only ord and outcome.
CREATE OR REPLACE FUNCTION chat_append_messages_v1(batch json)
RETURNS TABLE (
  ord integer, outcome text, outbox_id bigint,
  room_id text, seq bigint, message_id text, repository_id text, branch_id text, sender_kind text, sender_id text,
  request_id text, idempotency_key text, body_markdown bytea, body_bytes integer, rendered_html text, mentions jsonb,
  created_at timestamptz, authorization_decision_id text, authorizing_subject_id text, authorizing_subject_kind text,
  bot_credential_id text, bot_grant_id text
)
LANGUAGE sql AS $$
  SELECT r.ord, r.outcome, r.outbox_id,
    coalesce(r.room_id, m.room_id), coalesce(r.seq, m.seq), coalesce(r.message_id, m.message_id), m.repository_id,
    m.branch_id, m.sender_kind, m.sender_id, m.request_id, m.idempotency_key,
    decode(r.stored_message ->> 'body_base64', 'base64'), m.body_bytes, m.rendered_html, m.mentions,
    coalesce(timestamptz 'epoch' + r.created_ms * interval '1 millisecond', m.created_at), m.authorization_decision_id,
    m.authorizing_subject_id, m.authorizing_subject_kind, m.bot_credential_id, m.bot_grant_id
  FROM chat_append_messages_v3(batch) AS r
    LEFT JOIN LATERAL jsonb_populate_record(NULL::messages, r.stored_message) AS m ON true
$$;
