export { assemblePlatform, openPlatform, type Platform } from './platform.ts';
