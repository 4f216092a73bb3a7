"""A throwaway certificate authority for the TLS tests: a CA, server certificates for
127.0.0.1/localhost, client certificates (mTLS), and the bad ones (untrusted, expired),
written as PEM files the way Kafka's PEM settings read them."""
import datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ONE_DAY = datetime.timedelta(days=1)


def _name(cn, ou=None, o="brokerd-tests", email=None):
    parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o)]
    if ou:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    parts.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    if email:  # an IA5String, as certificate tools write it
        parts.append(x509.NameAttribute(NameOID.EMAIL_ADDRESS, email))
    return x509.Name(parts)


def _pem_key(key, password=None):
    enc = (serialization.BestAvailableEncryption(password.encode()) if password
           else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc)


def _pem_cert(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


class Authority:
    def __init__(self, directory, name="test-ca"):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - ONE_DAY).not_valid_after(now + 30 * ONE_DAY)
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.ca_file = self.dir / f"{name}.pem"
        self.ca_file.write_bytes(_pem_cert(self.cert))

    def issue(self, file_stem, cn, ou=None, server=False, expired=False, key_password=None, digest=None,
              email=None):
        """Writes FILE_STEM.key, FILE_STEM.crt and FILE_STEM.pem (key and chain in one file);
        returns the paths as a dict with the certificate's serial number. `digest`: the
        signature's hash (SHA-256 unless given, e.g. hashes.SHA1() for a weak one). `email`:
        an emailAddress attribute after the CN in the subject."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        start, end = (now - 10 * ONE_DAY, now - ONE_DAY) if expired else (now - ONE_DAY, now + 30 * ONE_DAY)
        builder = (x509.CertificateBuilder().subject_name(_name(cn, ou, email=email)).issuer_name(self.cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(start).not_valid_after(end))
        if server:
            import ipaddress
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            # A node is also a client of the other nodes (inter-broker TLS).
            builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                                   ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        else:
            builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        cert = builder.sign(self.key, digest or hashes.SHA256())
        key_pem, chain_pem = _pem_key(key, key_password), _pem_cert(cert) + _pem_cert(self.cert)
        paths = {"key": self.dir / f"{file_stem}.key", "cert": self.dir / f"{file_stem}.crt",
                 "pem": self.dir / f"{file_stem}.pem", "serial": cert.serial_number}
        paths["key"].write_bytes(key_pem)
        paths["cert"].write_bytes(chain_pem)
        paths["pem"].write_bytes(key_pem + chain_pem)
        return paths
