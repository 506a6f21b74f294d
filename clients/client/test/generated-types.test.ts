import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { GENERATED_PATH, generateTypes } from '../scripts/generate-types.ts';

describe('generated contract types', () => {
  it('src/generated/openapi.ts equals what clients/contracts/openapi.json generates', async () => {
    expect(readFileSync(GENERATED_PATH, 'utf8'), 'stale: run `pnpm --filter @chat/client types:generate` and commit the result').to.equal(
      await generateTypes(),
    );
  });

  it('names every operation of the contract', async () => {
    const text = await generateTypes();
    const contract = JSON.parse(readFileSync(new URL('../../contracts/openapi.json', import.meta.url), 'utf8')) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const ids = Object.values(contract.paths).flatMap((item) => Object.values(item).map((op) => op.operationId).filter(Boolean));
    // The contract's eleven, the service's two history-extension, three principal-inbox-extension,
    // three search-extension and five webhook-extension operations.
    expect(ids).to.have.length(24);
    expect(ids).to.include.members([
      'listRepositoryMessageHistory', 'listBranchMessageHistory', 'listPrincipalInbox', 'acknowledgePrincipalInbox', 'streamPrincipalInbox',
      'searchRepository', 'searchRepositoryRoom', 'searchBranchRoom',
      'createWebhook', 'listWebhooks', 'deleteWebhook', 'listWebhookDeadLetters', 'redeliverWebhookDeliveries',
    ]);
    for (const id of ids) expect(text).to.include(`${id}: {`);
  });
});
