// passkey.js drives the passkey section of the sign-in and enrollment pages.
//
// The button #passkey-start asks the provider for the options of a fresh
// challenge (POST to the form's data-options, with the form's CSRF token),
// hands them to the browser (navigator.credentials.get on a sign-in,
// navigator.credentials.create on an enrollment), and posts the browser's
// answer, as JSON in the field "credential", with the form #passkey-form. The
// provider checks it and answers the form as any other: back to the page, which
// then says what happened, or on to the application. What the script says
// while it waits, or when the person dismissed the browser's dialog, it says in
// #passkey-notice, a live region, in the page's language (#picture-text).
(function () {
  'use strict';

  function byId(id) {
    return document.getElementById(id);
  }

  var texts = {};

  // say puts the sentence key in the live region, styled as the picture's
  // notices are: kind "error" for a failure, else "info".
  function say(key, kind) {
    var notice = byId('passkey-notice');
    if (notice) {
      var text = texts[key] || '';
      notice.textContent = text;
      notice.classList.toggle('error', !!text && kind === 'error');
      notice.classList.toggle('info', !!text && kind !== 'error');
    }
  }

  // b64url decodes a base64url string into an ArrayBuffer.
  function fromB64url(s) {
    var b64 = s.replace(/-/g, '+').replace(/_/g, '/');
    while (b64.length % 4) {
      b64 += '=';
    }
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) {
      out[i] = bin.charCodeAt(i);
    }
    return out.buffer;
  }

  // toB64url encodes an ArrayBuffer (or view) as base64url without padding.
  function toB64url(buf) {
    var bytes = new Uint8Array(buf instanceof ArrayBuffer ? buf : buf.buffer);
    var bin = '';
    for (var i = 0; i < bytes.length; i++) {
      bin += String.fromCharCode(bytes[i]);
    }
    return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function descriptors(list) {
    return (list || []).map(function (d) {
      var out = { type: d.type, id: fromB64url(d.id) };
      if (d.transports) {
        out.transports = d.transports;
      }
      return out;
    });
  }

  // requestOptions turns the provider's JSON into what credentials.get takes.
  function requestOptions(o) {
    var pk = Object.assign({}, o.publicKey);
    pk.challenge = fromB64url(pk.challenge);
    if (pk.allowCredentials) {
      pk.allowCredentials = descriptors(pk.allowCredentials);
    }
    return { publicKey: pk };
  }

  // creationOptions turns the provider's JSON into what credentials.create takes.
  function creationOptions(o) {
    var pk = Object.assign({}, o.publicKey);
    pk.challenge = fromB64url(pk.challenge);
    pk.user = Object.assign({}, pk.user, { id: fromB64url(pk.user.id) });
    if (pk.excludeCredentials) {
      pk.excludeCredentials = descriptors(pk.excludeCredentials);
    }
    return { publicKey: pk };
  }

  // credentialJSON is the browser's answer as the provider reads it.
  function credentialJSON(cred) {
    var r = cred.response;
    var out = {
      id: cred.id,
      rawId: toB64url(cred.rawId),
      type: cred.type,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: toB64url(r.clientDataJSON) }
    };
    if (cred.authenticatorAttachment) {
      out.authenticatorAttachment = cred.authenticatorAttachment;
    }
    if (r.attestationObject) {
      out.response.attestationObject = toB64url(r.attestationObject);
      if (r.getTransports) {
        out.response.transports = r.getTransports();
      }
    } else {
      out.response.authenticatorData = toB64url(r.authenticatorData);
      out.response.signature = toB64url(r.signature);
      if (r.userHandle) {
        out.response.userHandle = toB64url(r.userHandle);
      }
    }
    return JSON.stringify(out);
  }

  // While the browser asks for the passkey the button is marked busy with
  // aria-disabled rather than disabled: a disabled button would lose the
  // focus, and a keyboard or screen reader user their place on the page.
  function setBusy(button, busy) {
    if (busy) {
      button.setAttribute('aria-disabled', 'true');
    } else {
      button.removeAttribute('aria-disabled');
    }
  }

  function start(form, kind, button) {
    if (button.getAttribute('aria-disabled') === 'true') {
      return; // one ceremony at a time
    }
    if (!window.PublicKeyCredential || !navigator.credentials) {
      say('passkeyUnsupported', 'error');
      return;
    }
    setBusy(button, true);
    say('passkeyWaiting');
    var body = new URLSearchParams();
    body.set('csrf', form.elements.csrf.value);
    fetch(form.getAttribute('data-options'), {
      method: 'POST',
      body: body,
      credentials: 'same-origin',
      headers: { Accept: 'application/json' }
    }).then(function (res) {
      if (!res.ok) {
        throw new Error('options: ' + res.status);
      }
      return res.json();
    }).then(function (options) {
      if (kind === 'enroll') {
        return navigator.credentials.create(creationOptions(options));
      }
      return navigator.credentials.get(requestOptions(options));
    }).then(function (cred) {
      if (!cred) {
        throw new DOMException('no credential', 'NotAllowedError');
      }
      byId('passkey-credential').value = credentialJSON(cred);
      form.submit();
    }).catch(function (err) {
      setBusy(button, false);
      button.focus();
      if (err && (err.name === 'NotAllowedError' || err.name === 'AbortError')) {
        say('passkeyCancelled');
      } else {
        say('passkeyFailed', 'error');
      }
    });
  }

  function init() {
    var data = byId('picture-text');
    try {
      texts = data ? JSON.parse(data.textContent) || {} : {};
    } catch (e) {
      texts = {};
    }
    var form = byId('passkey-form');
    var button = byId('passkey-start');
    if (!form || !button) {
      return;
    }
    var section = form.closest('[data-kind]');
    var kind = section ? section.getAttribute('data-kind') : 'login';
    button.addEventListener('click', function () {
      start(form, kind, button);
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
