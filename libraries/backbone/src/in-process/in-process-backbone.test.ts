import { runBackboneContract } from '../../test/backbone-contract.ts';
import { InProcessBackbone } from './in-process-backbone.ts';

runBackboneContract('InProcessBackbone', async (opts) => new InProcessBackbone(opts));
