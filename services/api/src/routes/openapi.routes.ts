import { Router } from 'express';
import { openApiDocument } from '@chat/contracts';
import { methodNotAllowed } from '@chat/http-kit';

/** The contract, served as the OpenAPI 3.1 document it was generated into. */
export function openApiRouter(): Router {
  const router = Router();
  router.route('/v1/openapi.json').get((_req, res) => void res.json(openApiDocument)).all(methodNotAllowed('GET'));
  return router;
}
