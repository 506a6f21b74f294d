export { assembleProcessResources, openProcessResources, type ProcessResources } from './process-resources.ts';
