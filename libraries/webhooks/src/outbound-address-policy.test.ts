import { expect } from 'chai';
import { OutboundAddressGuard, OutboundAddressRefusedError } from './outbound-address-policy.ts';

const refused = (fn: () => unknown) => expect(fn).to.throw(OutboundAddressRefusedError);

describe('outbound address guard', function () {
  const strict = new OutboundAddressGuard({ allowLoopback: false, allowedCidrs: [] });
  const development = new OutboundAddressGuard({ allowLoopback: true, allowedCidrs: ['10.20.0.0/16', 'fd00:1::/32'] });

  it('refuses private, loopback, link-local, metadata and mapped addresses, and lets public ones through', function () {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd12::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1', '224.0.0.1']) {
      refused(() => strict.checkAddress(address));
    }
    for (const address of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34']) strict.checkAddress(address);
  });

  it('allows loopback and the listed ranges only when told to', function () {
    development.checkAddress('127.0.0.1');
    development.checkAddress('::1');
    development.checkAddress('10.20.3.4');
    development.checkAddress('fd00:1::5');
    refused(() => development.checkAddress('10.21.0.1'));
    refused(() => development.checkAddress('169.254.169.254'));
  });

  it('takes https URLs, plain http only to loopback in development, and never credentials', function () {
    expect(strict.checkUrl('https://bots.example.com/hook?x=1').hostname).to.equal('bots.example.com');
    refused(() => strict.checkUrl('http://bots.example.com/hook'));
    refused(() => strict.checkUrl('https://127.0.0.1/hook'));
    refused(() => strict.checkUrl('https://localhost/hook'));
    refused(() => strict.checkUrl('https://[::1]/hook'));
    refused(() => strict.checkUrl('https://169.254.169.254/latest/meta-data'));
    refused(() => strict.checkUrl('https://user:pw@bots.example.com/hook'));
    refused(() => strict.checkUrl('ftp://bots.example.com/hook'));
    refused(() => strict.checkUrl('not a url'));
    expect(development.checkUrl('http://127.0.0.1:8123/hook').port).to.equal('8123');
    expect(development.checkUrl('http://localhost:8123/hook').hostname).to.equal('localhost');
    refused(() => development.checkUrl('http://10.20.0.5/hook'));
    expect(development.checkUrl('https://10.20.0.5/hook').hostname).to.equal('10.20.0.5');
  });

  it('refuses a range that is not CIDR', function () {
    expect(() => new OutboundAddressGuard({ allowLoopback: false, allowedCidrs: ['10.0.0.0'] })).to.throw(TypeError);
    expect(() => new OutboundAddressGuard({ allowLoopback: false, allowedCidrs: ['10.0.0.0/33'] })).to.throw(TypeError);
  });
});
