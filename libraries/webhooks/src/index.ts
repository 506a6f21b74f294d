export { OutboundAddressGuard, OutboundAddressRefusedError, type OutboundAddressPolicy } from './outbound-address-policy.ts';
export { DELIVERY_HEADERS, deliveryIdOf, signDelivery } from './delivery-signature.ts';
