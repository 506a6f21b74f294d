import { Component, createRef } from 'preact';
import type { MessageResponse } from '@chat/client';
import { commitCandidates, linkCommits, type CommitResolver } from './commit-links.ts';
import { highlightMentions } from './mention-highlight.ts';

/** The only render policy whose HTML the viewer trusts (spec 2, consumer rules). */
const TRUSTED_POLICY = 'sanitized_markdown_html_v1';

interface Props {
  message: MessageResponse;
  resolver: CommitResolver | undefined;
  commitHref: (sha: string) => string;
  highlighted: boolean;
  /** The message's permalink (an absolute URL of the viewer), shown as its "link" action. */
  permalink: string;
  /** Copies `permalink` for the person. */
  onCopyLink(permalink: string): void;
  /** The signed-in person, whose mentions are marked more strongly. */
  selfId: string | undefined;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/**
 * One message. The server's sanitized HTML is shown only under the trusted policy, anything else
 * as escaped text; `bodyMarkdown` is never HTML. A message never changes, so it renders once, and
 * the commit links it gains afterwards are not undone by a later render.
 */
export class MessageItem extends Component<Props> {
  private readonly body = createRef<HTMLDivElement>();
  private mounted = false;

  override shouldComponentUpdate(next: Props): boolean {
    return next.message !== this.props.message || next.highlighted !== this.props.highlighted || next.permalink !== this.props.permalink;
  }

  override componentDidMount(): void {
    this.mounted = true;
    const root = this.body.current;
    const { resolver, message, selfId } = this.props;
    if (!root) return;
    highlightMentions(root, message.mentions, selfId);
    if (!resolver || message.renderPolicy !== TRUSTED_POLICY) return;
    const candidates = commitCandidates(root);
    if (candidates.length === 0) return;
    void resolver.resolve(candidates).then(() => {
      if (this.mounted) linkCommits(root, resolver.shaOf, this.props.commitHref);
    });
  }

  override componentWillUnmount(): void {
    this.mounted = false;
  }

  override render({ message, highlighted, selfId }: Props) {
    const trusted = message.renderPolicy === TRUSTED_POLICY;
    const created = new Date(message.createdAt);
    const mentionsSelf = message.mentions?.some((m) => m.principalKind === 'human' && m.principalId === selfId) ?? false;
    return (
      <li class={`message${highlighted ? ' highlighted' : ''}${mentionsSelf ? ' mentions-self' : ''}`} id={`m-${message.messageId}`} data-message-id={message.messageId} tabIndex={-1} aria-label={`${message.senderId} at ${timeFormat.format(created)}${mentionsSelf ? ', mentions you' : ''}`}>
        <div class="message-head">
          <span class={`sender sender-${message.senderKind}`}>{message.senderKind === 'bot' ? `${message.senderId} (bot)` : message.senderId}</span>
          {message.authorizingSubjectId && message.authorizingSubjectId !== message.senderId ? (
            <span class="on-behalf">for {message.authorizingSubjectKind ?? 'subject'} {message.authorizingSubjectId}</span>
          ) : null}
          <time dateTime={message.createdAt} title={dateTimeFormat.format(created)}>
            {timeFormat.format(created)}
          </time>
          <a
            class="permalink"
            href={this.props.permalink}
            title="Copy a link to this message"
            onClick={(event) => {
              event.preventDefault();
              this.props.onCopyLink(this.props.permalink);
            }}
          >
            link
          </a>
        </div>
        {trusted ? (
          <div class="body markdown" ref={this.body} dangerouslySetInnerHTML={{ __html: message.renderedHtml }} />
        ) : (
          <div class="body plain" ref={this.body}>
            {message.bodyMarkdown}
          </div>
        )}
        <details class="attribution">
          <summary>Details</summary>
          <dl>
            <dt>Sender</dt>
            <dd>
              {message.senderKind} {message.senderId}
            </dd>
            {message.botCredentialId ? (
              <>
                <dt>Bot credential</dt>
                <dd>{message.botCredentialId}</dd>
              </>
            ) : null}
            {message.botGrantId ? (
              <>
                <dt>Bot grant</dt>
                <dd>{message.botGrantId}</dd>
              </>
            ) : null}
            {message.authorizingSubjectId ? (
              <>
                <dt>Authorized by</dt>
                <dd>
                  {message.authorizingSubjectKind} {message.authorizingSubjectId}
                </dd>
              </>
            ) : null}
            {message.authorizationDecisionId ? (
              <>
                <dt>Decision</dt>
                <dd>{message.authorizationDecisionId}</dd>
              </>
            ) : null}
            <dt>Request ID</dt>
            <dd>{message.requestId}</dd>
            <dt>Message ID</dt>
            <dd>{message.messageId}</dd>
          </dl>
        </details>
      </li>
    );
  }
}
