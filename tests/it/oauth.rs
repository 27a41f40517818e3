//! `serve --http --auth oauth`: the real binary as an OAuth resource server. The tests make
//! their own Ed25519 signing keys (from fixed seeds), write or serve the JWK Set, sign access
//! tokens with `jsonwebtoken`, and check the protected resource metadata, the challenges
//! and what each token sees.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::common::TestContext;
use crate::http::{HttpServer, Reply, agent, prompt_names, reply, two_collections};

const ISSUER: &str = "https://auth.example.com";
const RESOURCE: &str = "https://shelf.example.com/mcp";
const METADATA: &str = "https://shelf.example.com/.well-known/oauth-protected-resource/mcp";

/// An Ed25519 signing key of the tests, its key id and its public JWK.
struct Signer {
    kid: String,
    key: EncodingKey,
}

impl Signer {
    /// The key whose 32-byte seed is `seed` repeated, as PKCS#8 (RFC 8410).
    fn new(kid: &str, seed: u8) -> Signer {
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend([seed; 32]);
        Signer {
            kid: kid.to_string(),
            key: EncodingKey::from_ed_der(&der),
        }
    }

    fn jwk(&self) -> Jwk {
        let mut jwk = Jwk::from_encoding_key(&self.key, Algorithm::EdDSA)
            .unwrap_or_else(|err| panic!("the public JWK of {}: {err}", self.kid));
        jwk.common.key_id = Some(self.kid.clone());
        jwk
    }

    /// A token with these claims, its header naming `kid`.
    fn sign_as(&self, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.to_string());
        jsonwebtoken::encode(&header, claims, &self.key)
            .unwrap_or_else(|err| panic!("signing {claims}: {err}"))
    }

    fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }
}

/// A 2048-bit RSA key made for these tests (PKCS#1 DER, base64).
const RSA_KEY: &str = concat!(
    "MIIEowIBAAKCAQEAurgbknC9TN97JPC5pqVa64vLujzdrc5y2dvKhVEHXgwhhgfPF9kg1XzgtzLRjylX",
    "+QwtZVuA2lAGyZmm+Q5bp+Xf+TRBG8QuH6cSwFQq+3j11/T47BH4QYGNnf89IoxI1ddc1OiHOaNTIpKB",
    "Rjsn/hwV1AgCxDOHlTFSpQytrroae/rukF9e8HeWA9Rtw7RMy2Nz7bN3qRcxuosgbfMmpnPPM2+EXlVi",
    "97qhbuoTx80+J4rYqBRn9+PDYV8R3Y1AxPeBs1uk5NvUJ4fZr/akf/k5l1BHwgJypzFT1BBFfaFfXTxJ",
    "n6zprcB9s4UPAm2DDGo6WS0UCUsIK+8cN45FMQIDAQABAoIBAAEr5qO32qmHyxaMmEzLexiaiNFOZeOX",
    "uest1fZ3d90mAqLVsRMWlHoB5BYLOzJkmNRJeHSTugtRZ/xt2r+Epg9mobQ6UFoyGHS4jPrIs98zmyqY",
    "80pDv7s+8zlL7pStwno6MO9UkY2PtSbW3HECvvjF29ZVtSHNb9SNBHQ98iwFLX2ccZO5J5cQqt/jkIp8",
    "lfveXpmKGndG84GztHC05jk06NbuDf2QRN9+kXwp0q8ulN7cRUZugfoMJyCyAIwx7NzVGIged0bXCth7",
    "l0V7J38FBeii6rFIJ/UdkhV1aCAuCW8W5gJYQelj6w8zmkf8b5S0/ctn3gyf37zr+/gMEtECgYEA/LqU",
    "4i5hgNuRcb632NHGIBkC7wfd2t0lMJH9QHiLGaDzcKuZbShN3xS9YeNZVqKd22/svqwRwckGbbIiEXIK",
    "8sf8BI5a4D4oJ1+s2eaHGzvZ2xNEJYciUwJfAF4sHYrIC+E44YnTrY2VkY5mNIslf+cO4KSfSs9vILlY",
    "EG0j2wkCgYEAvSLNf+eh4aONGLTdDwZAcAG2zJLMnNcETvhhCuZoj7M515cP8rHrZIfeJEl43SS6oy5x",
    "7VfSicd5lF7VIFcK5ZhlrHkgkIlTBrgqA5d82mVYvojYoztvyyz0cc3ZSorDprrCyup21yHMhvDGD8Gu",
    "Uy9LSVqHoS10c9MEEWKFGukCgYBcV6hSxHOn65JHJ1JxjKSB0eG6iPtNHwSZrJ4GUoUwxhhtEKYstk9N",
    "tXxFKhbYiu524Xx1ZtXOIq+QoUfFbBAICX5SA9m8mbl+OX0k2RCAqOu/GlkKBUhLYFBqB/7ChJT3kkGA",
    "VyXbAiKmXouFo1n+U+ShvETfxs9p+47r4ZT6UQKBgAEGRjyyIYNaYnJG0Ie7TfANYlMbXHZhB8nxuHzZ",
    "oKlenCqZy+FRq2fBAKgLqdbw0v39S2qwthg+916hYOAq+Ikj2TEk+tMtm0CHENsyH+AC+ocVsK65rLJa",
    "DPzs04d+1u55RoLY4EnsCfKVLU16jBoxQGQmVGPAHkheVUBO20+5AoGBAMK9tT79AWDg6XGtWCFJVK0t",
    "4BLPfIz/JLp9OTjtEOx52xgHifIuJgvIpcqoTCyo7oHPDxeDsmj7J0nI4r6rWA3JWDL8TbPTlAOUTU3L",
    "cd8TwYu2esJatlcZccFGb2l2RCz3RrO1AJJEwoLk3x2hwn5xGPNcFPyRJlvqnIMCmTiU",
);

/// A P-256 key made for these tests (PKCS#8 DER, base64).
const P256_KEY: &str = concat!(
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgBqrtjcJ5JZvyfEenRW3guVpuLB0zg1pV",
    "YJ8Im4EyN2yhRANCAATFPjO+VSlbEBvROzjT/RW+TlJ0YWCO/yUVUui6a8lHGXOObKMigCbWEhLWMogU",
    "t1+ZaWHkD8wB1RNTskcjzl6o",
);

impl Signer {
    /// The key `base64` holds, for `alg`: RSA (PKCS#1) or P-256 (PKCS#8).
    fn of(kid: &str, alg: Algorithm, base64: &str) -> Signer {
        use base64::Engine;
        let der = base64::engine::general_purpose::STANDARD
            .decode(base64)
            .expect("a test key in base64");
        let key = match alg {
            Algorithm::ES256 => EncodingKey::from_ec_der(&der),
            _ => EncodingKey::from_rsa_der(&der),
        };
        Signer {
            kid: kid.to_string(),
            key,
        }
    }

    /// Its public JWK, `alg` pinned to `alg` (as `Jwk::from_encoding_key` does).
    fn jwk_for(&self, alg: Algorithm) -> Jwk {
        let mut jwk = Jwk::from_encoding_key(&self.key, alg)
            .unwrap_or_else(|err| panic!("the public JWK of {}: {err}", self.kid));
        jwk.common.key_id = Some(self.kid.clone());
        jwk
    }

    fn sign_with(&self, alg: Algorithm, claims: &Value) -> String {
        let mut header = Header::new(alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.key)
            .unwrap_or_else(|err| panic!("signing {claims} with {alg:?}: {err}"))
    }
}

fn key_set(signers: &[&Signer]) -> String {
    let set = JwkSet {
        keys: signers.iter().map(|signer| signer.jwk()).collect(),
    };
    serde_json::to_string(&set).expect("a JWK Set as JSON")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64
}

/// Claims a valid token carries, with `scope`.
fn claims(scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": RESOURCE, "sub": "someone", "exp": now() + 600,
           "iat": now(), "scope": scope})
}

/// `claims(scope)` with `changes` merged in.
fn claims_with(scope: &str, changes: Value) -> Value {
    let mut claims = claims(scope);
    for (name, value) in changes.as_object().expect("an object of changes") {
        claims[name] = value.clone();
    }
    claims
}

/// `serve --http --auth oauth` with the issuer, the resource and these keys (a file or URL).
fn serve(ctx: &TestContext, jwks: &str) -> HttpServer {
    HttpServer::start(
        &ctx.db,
        &[
            "--auth",
            "oauth",
            "--oauth-issuer",
            ISSUER,
            "--oauth-jwks",
            jwks,
            "--oauth-resource",
            RESOURCE,
        ],
    )
}

fn get(http: &HttpServer, path: &str) -> Reply {
    let url = format!("{}{path}", http.url().trim_end_matches("/mcp"));
    let response = agent()
        .get(&url)
        .call()
        .unwrap_or_else(|err| panic!("GET {url}: {err}\nstderr:\n{}", http.stderr()));
    reply(response)
}

/// Asserts a 401 whose challenge says `invalid_token` with words holding `why`.
fn assert_invalid(reply: &Reply, why: &str) {
    assert_eq!(reply.status, 401, "{}", reply.body);
    let challenge = reply.header("www-authenticate").unwrap_or_default();
    let expected = format!(
        "Bearer error=\"invalid_token\", error_description=\"{why}\", resource_metadata=\"{METADATA}\", scope=\"promptshelf:all\""
    );
    assert_eq!(challenge, expected, "{}", reply.body);
    assert!(reply.body.contains(why), "{}", reply.body);
}

#[test]
fn oauth_metadata_is_served_without_a_token_and_named_by_the_401() {
    let ctx = TestContext::new();
    let signer = Signer::new("k1", 1);
    let jwks = ctx.write("jwks.json", key_set(&[&signer]));
    let http = serve(&ctx, &jwks.display().to_string());

    let expected = json!({
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["promptshelf:all"],
    });
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata = get(&http, path);
        assert_eq!(metadata.status, 200, "{path}: {}", metadata.body);
        assert_eq!(metadata.header("content-type"), Some("application/json"));
        assert_eq!(metadata.json(), expected, "{path}");
    }
    let posted = http.post(&[], "{}");
    assert_eq!(posted.status, 401, "{}", posted.body);
    assert_eq!(
        posted.header("www-authenticate"),
        Some(
            format!("Bearer resource_metadata=\"{METADATA}\", scope=\"promptshelf:all\"").as_str()
        )
    );
    assert!(
        posted
            .body
            .contains("/.well-known/oauth-protected-resource"),
        "{}",
        posted.body
    );
    let basic = http.post(&[("authorization", "Basic dXNlcjpwYXNz")], "{}");
    assert_eq!(basic.status, 401, "{}", basic.body);
}

#[test]
fn oauth_metadata_is_not_served_with_bearer_tokens_of_the_library() {
    let ctx = TestContext::new();
    let http = HttpServer::start(&ctx.db, &["--auth", "token"]);
    let metadata = get(&http, "/.well-known/oauth-protected-resource");
    assert_eq!(metadata.status, 404, "{}", metadata.body);
}

#[test]
fn oauth_tokens_see_what_their_scopes_grant() {
    let ctx = TestContext::new();
    two_collections(&ctx);
    let signer = Signer::new("k1", 1);
    let jwks = ctx.write("jwks.json", key_set(&[&signer]));
    let http = serve(&ctx, &jwks.display().to_string());

    let alpha = signer.sign(&claims("openid promptshelf:collection:alpha"));
    let limited = http.with_token(&alpha, 1, "prompts/list", json!({}));
    assert_eq!(prompt_names(&limited), ["alpha-ask"]);
    assert!(
        limited.body.contains("\"cacheScope\":\"private\""),
        "{}",
        limited.body
    );
    let hidden = http.with_token(&alpha, 2, "prompts/get", json!({"name": "beta-ask"}));
    assert!(hidden.json()["error"].is_object(), "{}", hidden.body);

    let both = signer.sign(&claims(
        "promptshelf:collection:alpha promptshelf:collection:beta",
    ));
    let seen = prompt_names(&http.with_token(&both, 3, "prompts/list", json!({})));
    assert_eq!(seen, ["alpha-ask", "beta-ask"]);

    let all = signer.sign(&claims("promptshelf:all"));
    let whole = http.with_token(&all, 4, "prompts/list", json!({}));
    let names = prompt_names(&whole);
    assert!(
        names.contains(&"alpha-ask".to_string()) && names.len() > 2,
        "the whole library: {names:?}"
    );
    // Private too: what a token is answered depends on its scopes, so no shared cache may
    // hand it to another.
    assert!(
        whole.body.contains("\"cacheScope\":\"private\""),
        "{}",
        whole.body
    );

    for scope in ["openid profile", "other:all promptshelf:collection:"] {
        let nothing = signer.sign(&claims(scope));
        let refused = http.with_token(&nothing, 5, "prompts/list", json!({}));
        assert_eq!(refused.status, 403, "{scope}: {}", refused.body);
        assert_eq!(
            refused.header("www-authenticate"),
            Some(format!("Bearer error=\"insufficient_scope\", scope=\"promptshelf:all\", resource_metadata=\"{METADATA}\", error_description=\"the token's scopes grant no collection of this library\"").as_str()),
            "{scope}"
        );
        assert!(
            refused.body.contains("promptshelf:collection:NAME"),
            "{}",
            refused.body
        );
    }
    let without = signer.sign(&json!({"iss": ISSUER, "aud": [RESOURCE], "exp": now() + 60}));
    let refused = http.with_token(&without, 6, "prompts/list", json!({}));
    assert_eq!(refused.status, 403, "{}", refused.body);
}

/// An access token's `promptshelf:channel:NAME` scope serves it that release channel: the
/// version its label names, and the label in the provenance; two channels grant nothing.
#[test]
fn oauth_tokens_with_a_channel_scope_are_served_that_channel() {
    let ctx = TestContext::new();
    let prompt = ctx.write(
        "greet.prompt.md",
        "---\ndescription: Greets\n---\nHello v1\n",
    );
    ctx.ok(&["prompt", "add", &prompt.display().to_string()]);
    ctx.ok(&["label", "set", "production", "greet"]);
    ctx.write(
        "greet.prompt.md",
        "---\ndescription: Greets\n---\nHello v2\n",
    );
    ctx.ok(&["prompt", "add", &prompt.display().to_string()]);
    let signer = Signer::new("k1", 1);
    let jwks = ctx.write("jwks.json", key_set(&[&signer]));
    let http = serve(&ctx, &jwks.display().to_string());
    let text = |token: &str| {
        let got = http.with_token(token, 1, "prompts/get", json!({"name": "greet"}));
        let result = got.json()["result"].clone();
        (
            result["messages"][0]["content"]["text"].clone(),
            result["_meta"]["promptshelf/provenance"]["label"].clone(),
        )
    };
    let production = signer.sign(&claims("promptshelf:all promptshelf:channel:production"));
    assert_eq!(text(&production), (json!("Hello v1"), json!("production")));
    let library = signer.sign(&claims("promptshelf:all"));
    assert_eq!(text(&library), (json!("Hello v2"), Value::Null));
    let two = signer.sign(&claims(
        "promptshelf:all promptshelf:channel:production promptshelf:channel:staging",
    ));
    let refused = http.with_token(&two, 2, "prompts/list", json!({}));
    assert_eq!(refused.status, 403, "{}", refused.body);
}

#[test]
fn oauth_scopes_take_the_prefix_given() {
    let ctx = TestContext::new();
    two_collections(&ctx);
    let signer = Signer::new("k1", 1);
    let jwks = ctx.write("jwks.json", key_set(&[&signer]));
    let http = HttpServer::start(
        &ctx.db,
        &[
            "--auth",
            "oauth",
            "--oauth-issuer",
            ISSUER,
            "--oauth-jwks",
            &jwks.display().to_string(),
            "--oauth-resource",
            RESOURCE,
            "--oauth-scope-prefix",
            "shelf",
        ],
    );
    let metadata = get(&http, "/.well-known/oauth-protected-resource");
    assert_eq!(metadata.json()["scopes_supported"], json!(["shelf:all"]));
    let beta = signer.sign(&claims("shelf:collection:beta"));
    let seen = http.with_token(&beta, 1, "prompts/list", json!({}));
    assert_eq!(prompt_names(&seen), ["beta-ask"]);
    let ours = signer.sign(&claims("promptshelf:all"));
    let refused = http.with_token(&ours, 2, "prompts/list", json!({}));
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused
            .header("www-authenticate")
            .is_some_and(|challenge| challenge.contains("scope=\"shelf:all\"")),
        "{}",
        refused.body
    );
}

#[test]
fn oauth_tokens_that_fail_a_check_are_refused_as_invalid() {
    let ctx = TestContext::new();
    let signer = Signer::new("k1", 1);
    let other = Signer::new("k1", 2);
    let jwks = ctx.write("jwks.json", key_set(&[&signer]));
    let http = serve(&ctx, &jwks.display().to_string());
    let list = |token: &str| http.with_token(token, 1, "prompts/list", json!({}));
    let all = "promptshelf:all";

    let good = signer.sign(&claims(all));
    assert_eq!(list(&good).status, 200, "{}", list(&good).body);
    let audiences = signer.sign(&claims_with(
        all,
        json!({"aud": ["https://other.example.com", RESOURCE]}),
    ));
    assert_eq!(list(&audiences).status, 200);

    let cases = [
        (
            signer.sign(&claims_with(all, json!({"exp": now() - 3600}))),
            "the token has expired",
        ),
        (
            signer.sign(&claims_with(all, json!({"nbf": now() + 3600}))),
            "the token is not valid yet (nbf)",
        ),
        (
            signer.sign(&claims_with(
                all,
                json!({"aud": "https://other.example.com/mcp"}),
            )),
            "the token is not meant for this resource (aud)",
        ),
        (
            signer.sign(&claims_with(
                all,
                json!({"iss": "https://evil.example.com"}),
            )),
            "the token was issued by another authorization server (iss)",
        ),
        (
            other.sign(&claims(all)),
            "the token's signature does not verify",
        ),
        (
            signer.sign_as("k-unknown", &claims(all)),
            "the token is signed with a key the authorization server's key set does not hold",
        ),
        (
            {
                let mut claims = claims(all);
                claims.as_object_mut().map(|c| c.remove("aud"));
                signer.sign(&claims)
            },
            "the token lacks exp, iss or aud",
        ),
        (
            {
                let mut header = Header::new(Algorithm::HS256);
                header.kid = Some("k1".into());
                let secret = EncodingKey::from_secret(b"a shared secret").expect("an HMAC key");
                jsonwebtoken::encode(&header, &claims(all), &secret).expect("an HS256 token")
            },
            "the token is signed with an algorithm this server does not take (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or EdDSA)",
        ),
        (
            {
                use base64::Engine;
                let encode = |value: Value| {
                    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
                };
                format!(
                    "{}.{}.",
                    encode(json!({"alg": "none", "typ": "JWT"})),
                    encode(claims(all))
                )
            },
            "the token is not a signed JWT with an algorithm this server knows",
        ),
        (
            "not-a-jwt".to_string(),
            "the token is not a signed JWT with an algorithm this server knows",
        ),
    ];
    for (token, why) in cases {
        assert_invalid(&list(&token), why);
    }
    // A refused token changes nothing for the next one.
    assert_eq!(list(&good).status, 200);
}

#[test]
fn oauth_tokens_signed_with_rsa_and_p256_keys_are_taken() {
    let ctx = TestContext::new();
    let rsa = Signer::of("rsa", Algorithm::RS256, RSA_KEY);
    let ec = Signer::of("ec", Algorithm::ES256, P256_KEY);
    let mut unpinned = rsa.jwk_for(Algorithm::RS256);
    unpinned.common.key_id = Some("rsa-any".into());
    unpinned.common.key_algorithm = None;
    let set = JwkSet {
        keys: vec![
            rsa.jwk_for(Algorithm::RS256),
            ec.jwk_for(Algorithm::ES256),
            unpinned,
        ],
    };
    let jwks = ctx.write("jwks.json", serde_json::to_string(&set).expect("JSON"));
    let http = serve(&ctx, &jwks.display().to_string());
    let list = |token: &str| http.with_token(token, 1, "prompts/list", json!({}));
    let all = claims("promptshelf:all");

    for (signer, alg) in [(&rsa, Algorithm::RS256), (&ec, Algorithm::ES256)] {
        let taken = list(&signer.sign_with(alg, &all));
        assert_eq!(taken.status, 200, "{alg:?}: {}", taken.body);
    }
    let any = Signer::of("rsa-any", Algorithm::RS256, RSA_KEY);
    for alg in [Algorithm::RS512, Algorithm::PS256] {
        let taken = list(&any.sign_with(alg, &all));
        assert_eq!(
            taken.status, 200,
            "{alg:?} with an unpinned key: {}",
            taken.body
        );
    }
    // A key pinned to RS256 checks nothing else, and a P-256 key no RSA signature.
    let unknown = "the token is signed with a key the authorization server's key set does not hold";
    assert_invalid(&list(&rsa.sign_with(Algorithm::PS256, &all)), unknown);
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("ec".into());
    let crossed = jsonwebtoken::encode(&header, &all, &rsa.key).expect("an RS256 token");
    assert_invalid(&list(&crossed), unknown);
}

/// A JWK Set served over HTTP on 127.0.0.1 by a thread of the test, with how many times it
/// was asked for.
struct KeyServer {
    url: String,
    body: Arc<Mutex<String>>,
    served: Arc<AtomicUsize>,
}

impl KeyServer {
    fn start(body: String) -> KeyServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listen for the key set");
        let url = format!(
            "http://{}/jwks.json",
            listener.local_addr().expect("its address")
        );
        let body = Arc::new(Mutex::new(body));
        let served = Arc::new(AtomicUsize::new(0));
        let (shared, count) = (Arc::clone(&body), Arc::clone(&served));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|read| read > 0) {
                    if line == "\r\n" {
                        break;
                    }
                    line.clear();
                }
                let text = shared.lock().unwrap().clone();
                count.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
            }
        });
        KeyServer { url, body, served }
    }

    fn serve(&self, body: String) {
        *self.body.lock().unwrap() = body;
    }

    fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

#[test]
fn oauth_keys_are_fetched_from_a_url_and_again_for_an_unknown_key() {
    let ctx = TestContext::new();
    let first = Signer::new("first", 1);
    let second = Signer::new("second", 2);
    let third = Signer::new("third", 3);
    let keys = KeyServer::start(key_set(&[&first]));
    let http = serve(&ctx, &keys.url);
    assert_eq!(keys.served(), 1, "read once at start");
    let list = |signer: &Signer| {
        http.with_token(
            &signer.sign(&claims("promptshelf:all")),
            1,
            "prompts/list",
            json!({}),
        )
    };

    assert_eq!(list(&first).status, 200, "{}", list(&first).body);
    assert_eq!(keys.served(), 1, "a known key reads nothing");
    // The authorization server rotates its keys: a token of the new one reads the set again.
    keys.serve(key_set(&[&first, &second]));
    let rotated = list(&second);
    assert_eq!(rotated.status, 200, "{}\n{}", rotated.body, http.stderr());
    assert_eq!(keys.served(), 2);
    // Another unknown key right after is refused without asking again.
    keys.serve(key_set(&[&first, &second, &third]));
    assert_invalid(
        &list(&third),
        "the token is signed with a key the authorization server's key set does not hold",
    );
    assert_eq!(keys.served(), 2, "refreshes are at most one a minute");
}

#[test]
fn oauth_needs_its_flags_and_may_serve_off_loopback() {
    let ctx = TestContext::new();
    let signer = Signer::new("k1", 1);
    let jwks = ctx.write("jwks.json", key_set(&[&signer]));
    let jwks = jwks.display().to_string();
    let flags = [
        ("--oauth-issuer", ISSUER),
        ("--oauth-jwks", jwks.as_str()),
        ("--oauth-resource", RESOURCE),
    ];
    for (left_out, _) in flags {
        let mut args = vec!["serve", "--http", "127.0.0.1:0", "--auth", "oauth"];
        for (flag, value) in flags.iter().filter(|(flag, _)| *flag != left_out) {
            args.extend([*flag, *value]);
        }
        let stderr = ctx.fails(&args);
        assert!(
            stderr.contains(&format!("--auth oauth needs {left_out}")),
            "{stderr}"
        );
    }
    let stderr = ctx.fails(&["serve", "--http", "127.0.0.1:0", "--oauth-issuer", ISSUER]);
    assert!(
        stderr.contains("--oauth-issuer is for --auth oauth"),
        "{stderr}"
    );
    let stderr = ctx.fails(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--auth",
        "oauth",
        "--oauth-issuer",
        ISSUER,
        "--oauth-jwks",
        &jwks,
        "--oauth-resource",
        "shelf.example.com/mcp",
    ]);
    assert!(
        stderr
            .contains("--oauth-resource 'shelf.example.com/mcp' is not an http:// or https:// URL"),
        "{stderr}"
    );
    // Off loopback the address is taken: what stops this one is its missing key set file.
    let missing = ctx.path("no-such-jwks.json").display().to_string();
    let stderr = ctx.fails(&[
        "serve",
        "--http",
        "0.0.0.0:0",
        "--auth",
        "oauth",
        "--oauth-issuer",
        ISSUER,
        "--oauth-jwks",
        &missing,
        "--oauth-resource",
        RESOURCE,
    ]);
    assert!(
        stderr.contains(&format!("cannot open the key set file {missing}")),
        "{stderr}"
    );
    assert!(!stderr.contains("refusing to serve"), "{stderr}");
    // Nothing listens on port 1: the start stops, naming the URL.
    let unreachable = "https://127.0.0.1:1/jwks.json";
    let stderr = ctx.fails(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--auth",
        "oauth",
        "--oauth-issuer",
        ISSUER,
        "--oauth-jwks",
        unreachable,
        "--oauth-resource",
        RESOURCE,
    ]);
    assert!(
        stderr.contains(&format!("cannot fetch the key set {unreachable}")),
        "{stderr}"
    );
    let empty = ctx.write(
        "empty.json",
        r#"{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}"#,
    );
    let stderr = ctx.fails(&[
        "serve",
        "--http",
        "127.0.0.1:0",
        "--auth",
        "oauth",
        "--oauth-issuer",
        ISSUER,
        "--oauth-jwks",
        &empty.display().to_string(),
        "--oauth-resource",
        RESOURCE,
    ]);
    assert!(stderr.contains("holds no signing key"), "{stderr}");
}

#[test]
fn an_access_tokens_stream_ends_once_the_token_has_expired() {
    let ctx = TestContext::new();
    let signer = Signer::new("k1", 9);
    let jwks = ctx.write("jwks.json", key_set(&[&signer]));
    let http = serve(&ctx, &jwks.display().to_string());
    // Its `exp` 27 s ago: within the 30 s leeway, valid for about 3 s more.
    let expiring = signer.sign(&claims_with("promptshelf:all", json!({"exp": now() - 27})));
    let events = http.listen_with(&expiring, "soon");
    assert_eq!(
        events.next()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let closed = events.next();
    assert_eq!(closed["id"], "soon", "{closed}");
    assert_eq!(closed["result"]["resultType"], "complete", "{closed}");
    assert!(events.ends());
    let refused = http.with_token(&expiring, 2, "prompts/list", json!({}));
    assert_eq!(refused.status, 401, "{}", refused.body);
}
