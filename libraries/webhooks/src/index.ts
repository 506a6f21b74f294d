export { OutboundAddressGuard, OutboundAddressRefusedError, type OutboundAddressPolicy } from './outbound-address-policy.ts';
export { DELIVERY_HEADERS, deliveryIdOf, signDelivery } from './delivery-signature.ts';
export { deliveryContent, type DeliveryContent } from './delivery-body.ts';
export { retryDelayMs, type RetryPolicy } from './retry-backoff.ts';
export { WebhookSender, type WebhookPost, type WebhookPostResult, type WebhookSenderOptions } from './webhook-sender.ts';
export { InProcessLaneQueue, type LaneQueue, type LaneHandler, type LaneRunOutcome } from './lane-queue.ts';
export { BullmqLaneQueue, type BullmqLaneQueueOptions } from './bullmq-lane-queue.ts';
export { LaneRunner, type DeliveryOutcome, type LaneRunnerDeps, type LaneRunnerSettings } from './lane-runner.ts';
export { WebhookDeliverer, type WebhookDelivererDeps, type WebhookDelivererSettings } from './webhook-deliverer.ts';
