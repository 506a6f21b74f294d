export {
  assemblePlatform,
  openPlatform,
  type CoreCallObserver,
  type Platform,
  type PlatformConfig,
  type PlatformParts,
  type StreamCapSettings,
} from './platform.ts';
