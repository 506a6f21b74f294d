export type { AccessControl, AccessRequest, AuthorizedRequest, PrincipalRoute, PublicRoute, Route, RouteAnswer, RouteRequest, RouteServices, RouteTable, ScopedRoute } from './route.ts';
export { createRoutePipeline, type RoutePipeline, type RoutePipelineOptions } from './pipeline.ts';
export { requestIdOf } from './request-id.ts';
export { readJsonBody } from './json-body.ts';
export { writeError, writeJson } from './write.ts';
