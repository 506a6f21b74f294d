import type { NextFunction, Request, Response } from 'express';

/**
 * Marks every answer of an app `Cache-Control: no-store`. Each answer is one principal's and
 * authorized live against core, so a shared cache (a proxy, a CDN) or the browser's must not keep
 * it: a kept answer would outlive a revoked access or reach another principal. An event stream sets
 * its own `no-cache, no-transform` when it starts, which replaces this.
 */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  next();
}
