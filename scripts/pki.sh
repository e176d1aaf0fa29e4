# make_pki DIR: a throwaway CA, a server certificate for 127.0.0.1 and a
# client (student) certificate, EC P-256, valid for 30 days, keys 0600.
# Sourced by the demo and the benchmarks.
make_pki() {
    local dir=$1 name
    ossl() { openssl "$@" 2>/dev/null; }
    ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=ccrelay demo CA" -days 30 \
        -addext basicConstraints=critical,CA:TRUE -keyout "$dir/ca.key" -out "$dir/ca.pem"
    for name in server client; do
        ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
            -keyout "$dir/$name.key" -out "$dir/$name.csr"
        printf 'subjectAltName=IP:127.0.0.1\n' > "$dir/$name.ext"
        ossl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 30 \
            -extfile "$dir/$name.ext" -out "$dir/$name.pem"
    done
    chmod 600 "$dir"/*.key
}
